import Curlew
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

/// The README's examples, copied here so they are compiled (and run against a mock) with every
/// test run. Keep the two in step.
enum ReadmeExample {
    struct SearchResults: Decodable, Sendable {
        var total: Int
        var pictures: [Picture]
    }

    struct Picture: Decodable, Sendable {
        var id: Int
        var title: String
    }

    /// `GET /pictures/search?key=…` — one small struct per endpoint.
    struct SearchRequest: Endpoint {
        typealias Response = SearchResults
        var key: String

        var path: String { "pictures/search" }
        var query: [URLQueryItem] { [URLQueryItem(name: "key", value: key)] }
    }

    /// `POST /pictures` with a JSON body, answered by `201 Created` and no body worth reading.
    struct UploadRequest: Endpoint {
        typealias Response = EmptyResponse
        var title: String

        var method: HTTPRequest.Method { .post }
        var path: String { "pictures" }
        var headers: [String: String] { ["X-Client": "gallery-sync"] }
        var body: RequestPayload? { .json(["title": title]) }
    }

    static func tour(_ client: APIClient) async throws {
        let results = try await client.send(SearchRequest(key: "sunset"))
        print(results.total)

        let response = try await client.response(for: SearchRequest(key: "fog"))
        print(response.status, response.headers[.contentType] ?? "", response.body.count, response.source)

        do {
            _ = try await client.send(UploadRequest(title: "Dunes"))
        } catch let error as CurlewError {
            switch error.level {
            case .transport: print("network trouble:", error.code)
            case .httpStatus: print("HTTP", error.status?.code ?? 0, error.bodySnippet ?? "")
            case .dataFormat: print("bad data at", error.dataPath ?? "")
            default: throw error
            }
        }
    }

    static func configuredClient() -> (APIClient, CurlTransport) {
        let transport = CurlTransport(configuration: .init(maximumConnectionsPerHost: 16))
        var options = TransferOptions()
        options.totalTimeout = .seconds(10)
        options.idleTimeout = .seconds(5)
        options.maximumBodySize = 4 * 1024 * 1024
        let client = APIClient(
            configuration: ClientConfiguration(baseURL: "https://api.example.com", transferOptions: options),
            transport: transport)
        return (client, transport)
    }
}

@Suite("README examples")
struct ReadmeExampleTests {
    @Test func theTourRunsAgainstAMock() async throws {
        let transport = MockTransport { request in
            if request.method == .post { return .text("", status: .created, for: request) }
            return .json(#"{"total":0,"pictures":[]}"#, for: request)
        }
        let client = APIClient(baseURL: "https://api.test", transport: transport)
        try await ReadmeExample.tour(client)
        #expect(transport.requests.map(\.url) == [
            "https://api.test/pictures/search?key=sunset",
            "https://api.test/pictures/search?key=fog",
            "https://api.test/pictures",
        ])
        #expect(transport.requests.last?.body == Data(#"{"title":"Dunes"}"#.utf8))
    }

    @Test func theConfiguredClientKeepsItsOptions() async {
        let (client, transport) = ReadmeExample.configuredClient()
        #expect(client.configuration.transferOptions.totalTimeout == .seconds(10))
        #expect(transport.configuration.maximumConnectionsPerHost == 16)
        await transport.shutdown()
    }
}

/// The README's queue / batch / chain example, compiled against the demo-like endpoints below.
enum ReadmeConcurrencyExample {
    struct ImageRequest: Endpoint {
        typealias Response = Data
        var path: String
    }

    struct PictureRequest: Endpoint {
        typealias Response = String
        var id: Int
        var path: String { "pictures/\(id)" }
    }

    struct SearchRequest: Endpoint {
        typealias Response = String
        var key: String
        var path: String { "pictures/search" }
    }

    struct Session: Decodable, Sendable { var token: String }

    struct LoginRequest: Endpoint {
        typealias Response = Session
        var user: String
        var password: String
        var method: HTTPRequest.Method { .post }
        var path: String { "login" }
        var body: RequestPayload? { .form(["user": user, "password": password]) }
    }

    struct ProfileRequest: Endpoint {
        typealias Response = String
        var token: String
        var path: String { "profile" }
    }

    static func run(transport: any Transport) async throws -> (Int, [Int], String) {
        let queues = QueueActor(limits: ["images": 2])
        let client = APIClient(baseURL: "https://gallery.example.com/api", transport: transport, queues: queues)

        let bytes = try await client.send(ImageRequest(path: "images/1.jpg"), queue: "images", priority: .high)
        await queues.waitUntilIdle("images")

        await queues.hold("api")
        await queues.resume("api")

        let batch = await client.batch([1, 2, 3].map { PictureRequest(id: $0) },
                                       options: BatchOptions(mode: .collectAll, maximumConcurrency: 2))
        print(batch.values.count, batch.failedRequests.map(\.id))

        let (search, details) = await client.batch(SearchRequest(key: "fog"), PictureRequest(id: 3))
        _ = (search, details)

        let profile = try await client
            .chain(LoginRequest(user: "ines", password: "curlew"), name: "login")
            .then("profile") { session in ProfileRequest(token: session.token) }
            .run()
        return (bytes.count, batch.failedRequests.map(\.id), profile)
    }
}

extension ReadmeExampleTests {
    @Test func theConcurrencyExampleRuns() async throws {
        let transport = MockTransport { request in
            if request.url.hasSuffix("/login") { return .json(#"{"token":"t"}"#, for: request) }
            if request.url.hasSuffix("/pictures/2") { return .text("", status: .notFound, for: request) }
            return .text("ok", for: request)
        }
        let (count, failed, profile) = try await ReadmeConcurrencyExample.run(transport: transport)
        #expect(count == 2)
        #expect(failed == [2])
        #expect(profile == "ok")
        let sent = transport.requests.count
        #expect(sent == 8)
    }
}

/// The README's middleware example and "writing a middleware", compiled with stand-ins for the
/// app's own pieces.
enum ReadmeMiddlewareExample {
    struct Saved { var access = "a"; var refresh = "r" }
    static let saved = Saved()
    static let secret = "123456"
    static func parseCredential(_ raw: RawResponse) throws -> TokenStore.Credential {
        TokenStore.Credential(accessToken: String(decoding: raw.body, as: UTF8.self))
    }
    static func showLogin() {}

    static func makeClient() -> APIClient {
        let store = TokenStore(credential: .init(accessToken: saved.access, refreshToken: saved.refresh))
        let transport = CurlTransport.shared
        let client = APIClient(configuration: ClientConfiguration(
            baseURL: "https://gallery.example.com/api",
            middleware: [
                RetryMiddleware(),
                TokenRefreshMiddleware(store: store, refreshCodes: ["801"], sessionEndedCodes: ["802"]) { old in
                    let raw = try await transport.send(PreparedRequest(
                        method: .post, url: "https://gallery.example.com/api/auth/refresh",
                        headers: [.contentType: "text/plain"], body: Data((old.refreshToken ?? "").utf8)))
                    return try parseCredential(raw)
                },
                AuthorizationMiddleware(store: store),
                CommonArgumentsMiddleware(parameters: ["v": "2.1"], headers: ["X-Platform": "linux"]),
                ServerClock(),
                SigningMiddleware(secret: secret, algorithm: .md5, output: .parameter("sign"), timestampParameter: "ts"),
            ]),
            transport: transport)
        return client
    }

    static func observe(_ client: APIClient) async {
        for await event in client.events {
            if event.kind == .sessionEnded { showLogin() }
        }
    }

    struct RequestIDHeader: APIMiddleware {
        func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
            var request = request
            request.headers[HTTPField.Name("X-Request-ID")!] = UUID().uuidString
            do {
                let response = try await next(request, context)
                context.logger.debug("\(request.summary) → \(response.status.code)")
                return response
            } catch let error as CurlewError where error.level == .dataFormat {
                context.logger.warning("bad data at \(error.dataPath ?? "?")")
                throw error
            }
        }
    }
}

extension ReadmeExampleTests {
    @Test func theMiddlewareExampleBuildsAChainInOrder() async throws {
        let client = ReadmeMiddlewareExample.makeClient()
        #expect(client.configuration.middleware.map(\.kind) == [.retry, .tokenRefresh, .authorization, .commonArguments, .serverClock, .signing])
        let transport = MockTransport { .text("ok", for: $0) }
        let withID = APIClient(configuration: ClientConfiguration(baseURL: "https://api.test", middleware: [ReadmeMiddlewareExample.RequestIDHeader()]), transport: transport)
        _ = try await withID.send(Send(path: "x"))
        #expect(transport.requests.first?.headers[HTTPField.Name("X-Request-ID")!]?.count == 36)
    }
}
