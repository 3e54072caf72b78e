import Curlew
import CurlewOpenAPI
import Foundation
import HTTPTypes
import LoopbackServer
import OpenAPIRuntime
import Synchronization
import TestSupport
import Testing

/// What `httpbin`'s `/anything` echoes of a request.
struct AnythingEcho: Decodable {
    var method: String
    var data: String
    var url: String
}

/// Behaviours a user meets that the other suites leave open: redirects of each kind against a
/// real server (httpbin), the head and connect timeouts, a collected body cancelled midway, a
/// body never read, and a cached answer's body read more than once.
@Suite("CurlewTransport: what a user meets")
struct UserScenarioTests {
    static func httpbin() throws -> URL {
        let text = try #require(TestServers.environment["CURLEW_HTTPBIN_URL"], "CURLEW_HTTPBIN_URL is not set: httpbin (scripts/httpbin.sh)")
        return try #require(URL(string: text))
    }

    func makeClient(_ store: PetStoreServer, middleware: [any APIMiddleware] = [], configuration: CurlewTransport.Configuration = .init(), clientMiddlewares: [any ClientMiddleware] = [])
        throws -> Client
    {
        let api = APIClient(configuration: ClientConfiguration(baseURL: store.server.baseURL, middleware: middleware))
        return Client(serverURL: try store.serverURL, transport: CurlewTransport(client: api, configuration: configuration), middlewares: clientMiddlewares)
    }

    @Test("httpbin's 301, 302 and 308 to /anything: a .single PUT body fails with .redirectRefused, a .multiple one arrives at /anything", arguments: [301, 302, 308])
    func redirectsOfAPut(status: Int) async throws {
        let base = try Self.httpbin()
        let transport = CurlewTransport(client: APIClient(configuration: ClientConfiguration(baseURL: base.absoluteString)))
        let request = HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/redirect-to?url=/anything&status_code=\(status)")
        let single = HTTPBody(ScriptedChunks(chunks: [Array("abc".utf8)], failure: nil), length: .known(3), iterationBehavior: .single)
        await #expect { _ = try await transport.send(request, body: single, baseURL: base, operationID: "moved") } throws: {
            ($0 as? CurlewError)?.code == .redirectRefused
        }
        // The same bytes as a .multiple body of unknown length (streamed, not buffered).
        let multiple = HTTPBody(ScriptedChunks(chunks: [Array("abc".utf8)], failure: nil), length: .unknown, iterationBehavior: .multiple)
        let (response, body) = try await transport.send(request, body: multiple, baseURL: base, operationID: "moved")
        #expect(response.status == .ok)
        let echo = try JSONDecoder().decode(AnythingEcho.self, from: try await Data(collecting: try #require(body), upTo: 1 << 20))
        #expect(echo.method == "PUT")
        #expect(echo.data == "abc")
        #expect(echo.url.hasSuffix("/anything"))
    }

    @Test("An operation's head timeout fails it with .headTimeout at .transport; the client's other operations are unaffected")
    func headTimeout() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        var options = RequestOptions()
        options.headTimeout = .milliseconds(300)
        var configuration = CurlewTransport.Configuration()
        configuration.operations[Operations.GetPet.id] = OperationPolicy(options: options)
        let client = try makeClient(store, configuration: configuration)
        // `/v1/pets/999` holds its answer until the client goes away.
        let error = await #expect(throws: ClientError.self) { _ = try await client.getPet(path: .init(petId: 999)) }
        #expect(error.flatMap(curlewError(of:))?.code == .headTimeout)
        #expect(error.flatMap(curlewError(of:))?.stage == .transport)
        #expect(await eventually { store.closedWhileHeld == ["/v1/pets/999"] })
        #expect(try await client.listPets().ok.body.json.count == 2)
    }

    @Test("An operation's connect timeout against a server that never accepts fails it with .connectTimeout")
    func connectTimeout() async throws {
        let blackhole = try BlackholeListener()
        defer { blackhole.close() }
        var options = RequestOptions(totalTimeout: .seconds(30))
        options.connectTimeout = .milliseconds(200)
        var configuration = CurlewTransport.Configuration()
        configuration.operations[Operations.ListPets.id] = OperationPolicy(options: options)
        let api = APIClient(configuration: ClientConfiguration(baseURL: blackhole.baseURL))
        let client = Client(serverURL: try #require(URL(string: blackhole.baseURL + "/v1")), transport: CurlewTransport(client: api, configuration: configuration))
        let error = await #expect(throws: ClientError.self) { _ = try await client.listPets() }
        #expect(error.flatMap(curlewError(of:))?.code == .connectTimeout, "\(String(describing: error?.underlyingError))")
    }

    @Test("Cancelling an operation that collects its body, while the body arrives: CancellationError inside ClientError; the connection closes")
    func cancelWhileCollecting() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        var configuration = CurlewTransport.Configuration()
        configuration.operations[Operations.StreamEvents.id] = OperationPolicy(responseBody: .collect)
        let client = try makeClient(store, configuration: configuration)
        // The stream sends one event, then holds until the client goes away: collecting waits.
        let task = Task { try await client.streamEvents() }
        #expect(await eventually { store.server.inFlight(path: "/v1/events") == 1 })
        task.cancel()
        switch await task.result {
        case .success(let output): Issue.record("a cancelled call returned \(output)")
        case .failure(let error): #expect((error as? ClientError)?.underlyingError is CancellationError, "\(error)")
        }
        // The handler ends once the connection is gone (whether or not it had written its first
        // event by then); while the connection stays, it waits.
        #expect(await eventually { store.server.inFlight(path: "/v1/events") == 0 })
    }

    @Test("A streamed body the caller never iterates, once dropped, stops its transfer; the next call is answered")
    func bodyNeverIterated() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        let client = try makeClient(store)
        do {
            let body = try await client.streamEvents().ok.body.textEventStream
            #expect(body.iterationBehavior == .single)
        }
        // The handler ends once the connection is gone (whether or not it had written its first
        // event by then); while the connection stays, it waits.
        #expect(await eventually { store.server.inFlight(path: "/v1/events") == 0 })
        #expect(try await client.listPets().ok.body.json.count == 2)
    }

    @Test("A cached answer's body is .multiple: a middleware reads it twice, then the generated code decodes it")
    func cachedBodyReplays() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        var options = RequestOptions()
        options.cache = .maxAge(.minutes(5))
        var configuration = CurlewTransport.Configuration()
        configuration.operations[Operations.ListPets.id] = OperationPolicy(options: options)
        let reader = TwiceReader()
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
        let client = try makeClient(store, middleware: [cache], configuration: configuration, clientMiddlewares: [reader])
        for _ in 0..<2 { #expect(try await client.listPets().ok.body.json.map(\.name) == ["Rex", "Tom"]) }
        #expect(store.count("GET /v1/pets") == 1)
        let json = #"[{"id":1,"name":"Rex","tag":"dog"},{"id":2,"name":"Tom"}]"#
        let reads = reader.reads.withLock { $0 }
        #expect(reads.count == 2)
        for read in reads {
            #expect(read.behavior == .multiple)
            #expect(read.length == .known(Int64(json.utf8.count)))
            #expect(read.texts == [json, json])
        }
    }
}

extension UserScenarioTests {
    @Test(
        "Retries and refresh spent: the last 503's and 401's error payload reaches the caller whole, streamed or collected",
        arguments: [OperationPolicy.ResponseBodyHandling.automatic, .collect])
    func forwardedErrorPayloads(handling: OperationPolicy.ResponseBodyHandling) async throws {
        let large = String(repeating: "x", count: 300_000)
        let server = try await LoopbackServer.start { request in
            switch request.path {
            case "/busy": ServerResponse(status: 503, headers: [("Content-Type", "application/json"), ("Retry-After", "0")], body: Array(#"{"message":"busy"}"#.utf8))
            case "/large": ServerResponse(status: 503, headers: [("Retry-After", "0")], body: Array(large.utf8))
            case "/slow":
                // Sent in two writes, without a length: the answer is still arriving when forwarded.
                .stream(status: 503, headers: [("Retry-After", "0")]) { writer in
                    try await writer.write(#"{"message":"#)
                    try await writer.write(#""slow"}"#)
                }
            default: .text("expired", status: 401)
            }
        }
        defer { Task { await server.shutdown() } }
        let tokens = TokenStore(credential: .init(accessToken: "T1"))
        let middleware: [any APIMiddleware] = [
            RetryMiddleware(maximumAttempts: 2, baseDelay: .milliseconds(1)),
            TokenRefreshMiddleware(store: tokens, maximumAttempts: 2) { _ in .init(accessToken: "T9") }, AuthorizationMiddleware(store: tokens),
        ]
        let api = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: middleware))
        let transport = CurlewTransport(client: api, configuration: CurlewTransport.Configuration(defaultPolicy: OperationPolicy(responseBody: handling)))
        let base = try #require(URL(string: server.baseURL))
        for (path, status, payload) in [("/busy", 503, #"{"message":"busy"}"#), ("/large", 503, large), ("/slow", 503, #"{"message":"slow"}"#), ("/me", 401, "expired")] {
            let (response, body) = try await transport.send(
                HTTPRequest(method: .get, scheme: nil, authority: nil, path: path), body: nil, baseURL: base, operationID: "errorPayload")
            #expect(response.status.code == status, "\(path)")
            #expect(try await String(collecting: try #require(body), upTo: 1 << 20) == payload, "\(path)")
            #expect(server.requests(path: path).count == 2, "\(path)")
        }
    }
}

/// Reads every response body twice before handing it on (only a `.multiple` body allows it).
final class TwiceReader: ClientMiddleware, Sendable {
    struct Read: Sendable {
        var behavior: IterationBehavior
        var length: HTTPBody.Length
        var texts: [String]
    }

    let reads = Mutex<[Read]>([])

    func intercept(
        _ request: HTTPRequest, body: HTTPBody?, baseURL: URL, operationID: String,
        next: @Sendable (HTTPRequest, HTTPBody?, URL) async throws -> (HTTPResponse, HTTPBody?)
    ) async throws -> (HTTPResponse, HTTPBody?) {
        let (response, body) = try await next(request, body, baseURL)
        guard let body else { return (response, nil) }
        var texts: [String] = []
        for _ in 0..<2 { texts.append(try await String(collecting: body, upTo: 1 << 20)) }
        reads.withLock { $0.append(Read(behavior: body.iterationBehavior, length: body.length, texts: texts)) }
        return (response, body)
    }
}
