import AsyncHTTPClient
import Curlew
import CurlewOpenAPI
import Foundation
import HTTPTypes
import NIOCore
import NIOPosix
import OpenAPIAsyncHTTPClient
import OpenAPIRuntime
import OpenAPIURLSession

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The generated client of `Benchmarks/openapi/openapi.yaml` (nginx's `/small.json` as the
/// operation `getSmall`), its body decoded into `Components.Schemas.SmallRecord` by the generated
/// code. The same client on two transports: ``OpenAPICurlewClient`` and ``OpenAPIAHCClient``.
///
/// The generated code does not hand out the body's length: a fetch checks the decoded record
/// (`id` 42, `name` "curlew") and reports the document's length.
enum GeneratedSmall {
    /// The server part of `url` (the document's path is the operation's).
    static func serverURL(of url: String) throws -> URL {
        guard var components = URLComponents(string: url) else { throw BadURL(url: url) }
        components.path = ""
        components.query = nil
        guard let server = components.url else { throw BadURL(url: url) }
        return server
    }

    /// One `getSmall` call, checked.
    static func fetch(_ client: Client, expectedBytes: Int?) async throws -> (status: Int, bodyBytes: Int) {
        let record = try await client.getSmall().ok.body.json
        guard record.id == 42, record.name == "curlew" else { throw UnexpectedRecord(name: record.name) }
        return (200, expectedBytes ?? 0)
    }

    /// `--url` is not an absolute URL.
    struct BadURL: Error {
        let url: String
    }

    /// The body decoded but does not hold the document `run.sh` serves.
    struct UnexpectedRecord: Error {
        let name: String
    }
}

/// The generated client on `CurlewTransport`: an `APIClient` on a `CurlTransport` of its own with
/// default limits and `engines` engines, no middleware, the default operation policy (response
/// bodies streamed, 1 MiB high-water mark).
struct OpenAPICurlewClient: BenchmarkClient {
    private let transport: CurlTransport
    private let client: Client
    private let expectedBytes: Int?

    init(url: String, expectedBytes: Int?, engines: Int? = nil) throws {
        transport = CurlTransport(configuration: .init(engineCount: engines))
        let serverURL = try GeneratedSmall.serverURL(of: url)
        let api = APIClient(configuration: ClientConfiguration(baseURL: serverURL.absoluteString), transport: transport)
        client = Client(serverURL: serverURL, transport: CurlewTransport(client: api))
        self.expectedBytes = expectedBytes
    }

    func fetch() async throws -> (status: Int, bodyBytes: Int) {
        try await GeneratedSmall.fetch(client, expectedBytes: expectedBytes)
    }

    func shutdown() async {
        await transport.shutdown()
    }

    var executor: (any TaskExecutor)? { transport.executor }
}

/// The generated client on swift-openapi-async-http-client 1.5.0's `AsyncHTTPClientTransport`,
/// over an `HTTPClient` configured as the `async-http-client` row's (HTTP/1.1, 64 connections per
/// host, NIO's shared two-thread group) and the transport's default 60 s timeout — or, with
/// `shared`, over the transport's default client, `HTTPClient.shared` (8 connections per host).
struct OpenAPIAHCClient: BenchmarkClient {
    /// The client this benchmark made (and shuts down); `nil` for `HTTPClient.shared`.
    private let ownClient: HTTPClient?
    private let client: Client
    private let expectedBytes: Int?

    init(url: String, expectedBytes: Int?, shared: Bool = false) throws {
        if shared {
            ownClient = nil
        } else {
            var configuration = HTTPClient.Configuration()
            configuration.httpVersion = .http1Only
            configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
            ownClient = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
        }
        let transport = ownClient.map { AsyncHTTPClientTransport(configuration: .init(client: $0)) } ?? AsyncHTTPClientTransport()
        client = Client(serverURL: try GeneratedSmall.serverURL(of: url), transport: transport)
        self.expectedBytes = expectedBytes
    }

    func fetch() async throws -> (status: Int, bodyBytes: Int) {
        try await GeneratedSmall.fetch(client, expectedBytes: expectedBytes)
    }

    func shutdown() async {
        guard let ownClient else { return }
        do {
            try await ownClient.shutdown()
        } catch {
            Console.error("AsyncHTTPClient shutdown failed: \(error)")
        }
    }
}

/// The generated client on swift-openapi-urlsession 1.4.0's `URLSessionTransport`, over an
/// ephemeral `URLSession` (as the `urlsession` row). On Linux the transport collects both bodies
/// whole before handing them on.
struct OpenAPIURLSessionClient: BenchmarkClient {
    private let session: URLSession
    private let client: Client
    private let expectedBytes: Int?

    init(url: String, expectedBytes: Int?) throws {
        session = URLSession(configuration: .ephemeral)
        client = Client(serverURL: try GeneratedSmall.serverURL(of: url), transport: URLSessionTransport(configuration: .init(session: session)))
        self.expectedBytes = expectedBytes
    }

    func fetch() async throws -> (status: Int, bodyBytes: Int) {
        try await GeneratedSmall.fetch(client, expectedBytes: expectedBytes)
    }

    func shutdown() async {
        session.invalidateAndCancel()
    }
}

/// The generated client on ``CannedTransport``: no HTTP, no I/O — the generated code's and the
/// runtime's own cost per call, which every transport's row includes.
struct OpenAPICannedClient: BenchmarkClient {
    private let client: Client
    private let expectedBytes: Int?

    init(url: String, expectedBytes: Int?) throws {
        client = Client(serverURL: try GeneratedSmall.serverURL(of: url), transport: CannedTransport())
        self.expectedBytes = expectedBytes
    }

    func fetch() async throws -> (status: Int, bodyBytes: Int) {
        try await GeneratedSmall.fetch(client, expectedBytes: expectedBytes)
    }

    func shutdown() async {}
}

/// Answers every request with what nginx answers `GET /small.json` (its head fields and the
/// document, as one chunk of known length), without sending anything.
struct CannedTransport: ClientTransport {
    /// `run.sh`'s document.
    static let document = ArraySlice(
        #"{"id":42,"name":"curlew","tags":["bird","wader","numenius","arquata"],"active":true,"score":98.625,"owner":{"id":7,"login":"benchmark"},"created":"2026-01-01T00:00:00Z","description":"a fixed JSON body for client benchmarks"}"#
            .utf8)

    func send(_ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String) async throws -> (HTTPResponse, HTTPBody?) {
        let fields = HTTPFields([
            HTTPField(name: .server, value: "nginx"),
            HTTPField(name: .date, value: "Fri, 27 Nov 2026 05:00:00 GMT"),
            HTTPField(name: .contentType, value: "application/json"),
            HTTPField(name: .contentLength, value: String(Self.document.count)),
            HTTPField(name: .connection, value: "keep-alive"),
        ])
        return (HTTPResponse(status: .ok, headerFields: fields), HTTPBody(Self.document, length: .known(Int64(Self.document.count)), iterationBehavior: .single))
    }
}
