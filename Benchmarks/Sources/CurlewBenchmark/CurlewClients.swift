import Curlew
import Foundation

/// The ~200-byte JSON document nginx serves at `/small.json` (see `Benchmarks/run.sh`).
struct SmallRecord: Decodable, Sendable {
    struct Owner: Decodable, Sendable {
        var id: Int
        var login: String
    }

    var id: Int
    var name: String
    var tags: [String]
    var active: Bool
    var score: Double
    var owner: Owner
    var created: String
    var description: String
}

/// `GET <url>` returning the body bytes.
struct SmallDataRequest: Endpoint {
    typealias Response = Data
    let path: String
}

/// `GET <url>` decoded into a ``SmallRecord``.
struct SmallRecordRequest: Endpoint {
    typealias Response = SmallRecord
    let path: String
}

/// Curlew with `Response == Data`, on a `CurlTransport` of its own with default limits and
/// `engines` engines (`nil`: the default, one per processor). Over https it trusts `caFile` and
/// uses HTTP/2 when `http2` (the default `.automatic`), HTTP/1.1 otherwise.
struct CurlewDataClient: BenchmarkClient {
    private let transport: CurlTransport
    private let client: APIClient
    private let request: SmallDataRequest

    init(url: String, caFile: String? = nil, http2: Bool = false, engines: Int? = nil) {
        transport = CurlTransport(configuration: .init(engineCount: engines))
        var options = TransferOptions()
        if let caFile { options.connection.tls.trustRoots = .file(caFile) }
        options.httpVersion = http2 ? .automatic : .http1Only
        client = APIClient(configuration: ClientConfiguration(transferOptions: options), transport: transport)
        request = SmallDataRequest(path: url)
    }

    func fetch() async throws -> (status: Int, bodyBytes: Int) {
        let response = try await client.response(for: request)
        return (response.status.code, response.value.count)
    }

    func shutdown() async {
        await transport.shutdown()
    }

    var executor: (any TaskExecutor)? { transport.executor }
}

/// Curlew decoding the JSON body into a small `Decodable` struct with the default `JSONDecoder`.
struct CurlewDecodingClient: BenchmarkClient {
    private let transport: CurlTransport
    private let client: APIClient
    private let request: SmallRecordRequest

    init(url: String, engines: Int? = nil) {
        transport = CurlTransport(configuration: .init(engineCount: engines))
        client = APIClient(configuration: ClientConfiguration(), transport: transport)
        request = SmallRecordRequest(path: url)
    }

    func fetch() async throws -> (status: Int, bodyBytes: Int) {
        let response = try await client.response(for: request)
        guard response.value.name == "curlew" else { throw UnexpectedContent(name: response.value.name) }
        return (response.status.code, response.body.count)
    }

    func shutdown() async {
        await transport.shutdown()
    }

    var executor: (any TaskExecutor)? { transport.executor }

    /// The body decoded but does not hold the document `run.sh` serves.
    struct UnexpectedContent: Error {
        let name: String
    }
}

/// Curlew (Data) with every request going through the named queue `"bench"` of a
/// ``QueueActor`` whose limit equals the concurrency level. The driver never has more than that
/// many requests in flight, so the queue never makes one wait; what it adds is the acquire and
/// release hops to the actor on every request.
struct CurlewQueuedClient: BenchmarkClient {
    /// The queue every request goes through.
    static let queueName = "bench"

    private let transport: CurlTransport
    private let client: APIClient
    private let request: SmallDataRequest

    init(url: String, limit: Int, engines: Int? = nil) {
        transport = CurlTransport(configuration: .init(engineCount: engines))
        client = APIClient(configuration: ClientConfiguration(), transport: transport, queues: QueueActor(limits: [Self.queueName: limit]))
        request = SmallDataRequest(path: url)
    }

    func fetch() async throws -> (status: Int, bodyBytes: Int) {
        // `send(_:queue:)` is `response(for:queue:).value`; this form also returns the status.
        let response = try await client.response(for: request, queue: Self.queueName)
        return (response.status.code, response.value.count)
    }

    func shutdown() async {
        await transport.shutdown()
    }

    var executor: (any TaskExecutor)? { transport.executor }
}

/// Curlew (Data) on a client configured with five middleware, outermost first: common arguments
/// (`v`, `platform` query parameters and an `X-Device` header), a bearer token from a
/// ``TokenStore``, a ``ServerClock`` learning from each `Date` header, ``RetryMiddleware`` with
/// its defaults (never retries here: every response is 200), and MD5 signing into `sign` with a
/// `ts` timestamp. nginx's `location = /small.json` ignores the query, so the response is the
/// same 225 bytes.
struct CurlewMiddlewareClient: BenchmarkClient {
    private let transport: CurlTransport
    private let client: APIClient
    private let request: SmallDataRequest

    init(url: String, engines: Int? = nil) {
        transport = CurlTransport(configuration: .init(engineCount: engines))
        let middleware: [any APIMiddleware] = [
            CommonArgumentsMiddleware(parameters: ["v": "1", "platform": "linux"], headers: ["X-Device": "bench"]),
            AuthorizationMiddleware(store: TokenStore(credential: .init(accessToken: "t0k3n"))),
            ServerClock(),
            RetryMiddleware(),
            SigningMiddleware(secret: "123456", algorithm: .md5, output: .parameter("sign"), timestampParameter: "ts"),
        ]
        // The request URL is absolute: its origin must be trusted, or the credential, the common
        // arguments and the signature would (rightly) be left out and the row would measure less.
        client = APIClient(configuration: ClientConfiguration(middleware: middleware, trustedOrigins: [url]), transport: transport)
        request = SmallDataRequest(path: url)
    }

    func fetch() async throws -> (status: Int, bodyBytes: Int) {
        let response = try await client.response(for: request)
        return (response.status.code, response.value.count)
    }

    func shutdown() async {
        await transport.shutdown()
    }

    var executor: (any TaskExecutor)? { transport.executor }
}
