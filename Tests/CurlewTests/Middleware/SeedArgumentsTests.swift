import Curlew
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

struct SeedSearchGet: Endpoint {
    typealias Response = String
    @Query var key: String
    @Query var v: String? = nil
    var path: String { "search" }
}

struct SeedNoteForm: Endpoint {
    typealias Response = String
    @Field var title: String
    @Field var v: String? = nil
    var method: HTTPRequest.Method { .post }
    var path: String { "notes" }
}

struct SeedNoteJSON: Endpoint {
    typealias Response = String
    var method: HTTPRequest.Method { .post }
    var path: String { "notes" }
    var parameters: [String: ParameterValue] { ["q": "fog", "page": 2, "f": ["b": 1, "a": [true]]] }
    var parameterEncoding: ParameterEncoding { .json }
}

@Suite("Seeds: common arguments and signing")
struct SeedArgumentsTests {
    func client(_ server: LoopbackServer, _ transport: CurlTransport, _ middleware: [any APIMiddleware]) -> APIClient {
        APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: middleware), transport: transport)
    }

    @Test func commonArgumentsGoWhereTheRequestsParametersGo() async throws {
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            let common = CommonArgumentsMiddleware(parameters: ["v": "2.1", "platform": "linux"], placement: .alongsideParameters)
            let client = client(server, transport, [common])
            _ = try await client.send(SeedSearchGet(key: "fog"))
            _ = try await client.send(SeedNoteForm(title: "hi", v: "own"))
            _ = try await client.send(SeedNoteJSON())
            let seen = server.requests
            #expect(seen[0].uri == "/search?key=fog&platform=linux&v=2.1")
            #expect(seen[1].uri == "/notes")
            #expect(seen[1].bodyText == "title=hi&v=own&platform=linux", "the request's own v is kept")
            #expect(seen[2].uri == "/notes")
            #expect(seen[2].bodyText == #"{"f":{"a":[true],"b":1},"page":2,"platform":"linux","q":"fog","v":"2.1"}"#)
        }
    }

    @Test func existingArgumentsCanBeRewritten() async throws {
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            let common = CommonArgumentsMiddleware(
                parameters: ["v": "2.1"], headers: ["X-Platform": "linux"], placement: .alongsideParameters, replacesExisting: true)
            let client = client(server, transport, [common])
            _ = try await client.send(SeedSearchGet(key: "fog", v: "1.0")) { _ in }
            _ = try await client.send(SeedNoteForm(title: "hi", v: "own"))
            let seen = server.requests
            #expect(seen[0].uri == "/search?key=fog&v=2.1")
            #expect(seen[1].bodyText == "title=hi&v=2.1")
            #expect(seen.allSatisfy { $0.header("X-Platform") == "linux" })
        }
    }

    @Test func existingArgumentsAreRewrittenInAJSONBodyAndExistingHeadersReplaced() async throws {
        struct NoteWithPlatform: Endpoint {
            typealias Response = String
            var method: HTTPRequest.Method { .post }
            var path: String { "notes" }
            var headers: [String: String] { ["X-Platform": "own"] }
            var parameters: [String: ParameterValue] { ["q": "fog", "v": "own"] }
            var parameterEncoding: ParameterEncoding { .json }
        }
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            let replacing = CommonArgumentsMiddleware(
                parameters: ["v": "2.1"], headers: ["X-Platform": "linux"], placement: .alongsideParameters, replacesExisting: true)
            _ = try await client(server, transport, [replacing]).send(NoteWithPlatform())
            let keeping = CommonArgumentsMiddleware(
                parameters: ["v": "2.1"], headers: ["X-Platform": "linux"], placement: .alongsideParameters)
            _ = try await client(server, transport, [keeping]).send(NoteWithPlatform())
            let seen = server.requests
            #expect(seen.count == 2)
            #expect(seen[0].bodyText == #"{"q":"fog","v":"2.1"}"#)
            #expect(seen[0].headerValues("X-Platform") == ["linux"])
            #expect(seen[1].bodyText == #"{"q":"fog","v":"own"}"#)
            #expect(seen[1].headerValues("X-Platform") == ["own"])
        }
    }

    @Test func bodyPlacementRefusesARawBodyAndSendsNothing() async throws {
        struct RawNote: Endpoint {
            typealias Response = String
            var method: HTTPRequest.Method { .post }
            var path: String { "raw" }
            var body: RequestPayload? { .data(Data("plain words".utf8), contentType: "text/plain") }
        }
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            let client = client(server, transport, [CommonArgumentsMiddleware(parameters: ["v": "2.1"], placement: .body)])
            let error = await #expect(throws: CurlewError.self) { try await client.send(RawNote()) }
            #expect(error?.code == .encodingFailed)
            #expect(error?.message.contains("text/plain") == true, "\(error?.message ?? "")")
            #expect(server.requestCount == 0)
        }
    }

    @Test func aRequiredRenamedHeaderGoesOutUnderItsWireName() async throws {
        struct NotedSearch: Endpoint {
            typealias Response = String
            @Header var note: String
            static let parameterNames = ["note": "X-Note"]
            var path: String { "search" }
        }
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            _ = try await client(server, transport, []).send(NotedSearch(note: "fog and sun"))
            let seen = try #require(server.requests.first)
            #expect(seen.headerValues("X-Note") == ["fog and sun"])
            #expect(seen.headerValues("note").isEmpty)
        }
    }

    @Test func bodyPlacementGivesABodylessPostAFormBody() async throws {
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            struct Ping: Endpoint {
                typealias Response = String
                var method: HTTPRequest.Method { .post }
                var path: String { "ping" }
            }
            let client = client(server, transport, [CommonArgumentsMiddleware(parameters: ["v": "2.1"], placement: .body)])
            _ = try await client.send(Ping())
            #expect(server.requests.first?.bodyText == "v=2.1")
            #expect(server.requests.first?.header("Content-Type") == "application/x-www-form-urlencoded")
        }
    }

    @Test func signingCoversJSONBodiesInTheDocumentedCanonicalForm() async throws {
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            let signing = SigningMiddleware(secret: "123456", algorithm: .md5, output: .parameter("sign"), timestampParameter: "ts", now: { Date(timeIntervalSince1970: 9) })
            let client = client(server, transport, [signing])
            _ = try await client.send(SeedNoteJSON())
            let canonical = #"f={"a":[true],"b":1}&page=2&q=fog&ts=9"#
            let expected = SigningMiddleware.signature(of: canonical, secret: "123456", algorithm: .md5)
            // Known answers, computed outside Curlew (Python's hashlib/hmac over the same bytes).
            #expect(expected == "d115d3904183ab536f0acabfd211ced5")
            #expect(
                SigningMiddleware.signature(of: canonical, secret: "123456", algorithm: .hmacSHA256)
                    == "041f1113e879fa787c64e7b5e76a91a3ada0318182d4ab6770f43e5a40b330a7")
            let seen = try #require(server.requests.first)
            #expect(seen.uri == "/notes?ts=9&sign=\(expected)")
            // The JSON body as sent, recomputed independently.
            #expect(seen.bodyText == #"{"f":{"a":[true],"b":1},"page":2,"q":"fog"}"#)
        }
    }

    @Test func theCanonicalStringOfAJSONBody() throws {
        var request = PreparedRequest(
            method: .post, url: "https://api.example.com/x?ts=9", headers: [.contentType: "application/json; charset=utf-8"],
            body: Data(#"{"q":"fog","page":2,"f":{"b":1,"a":[true]},"n":null,"s":"a\"b"}"#.utf8))
        #expect(SigningMiddleware.canonicalString(for: request) == #"f={"a":[true],"b":1}&n=null&page=2&q=fog&s=a"b&ts=9"#)
        request.body = Data("[1,2]".utf8)
        #expect(SigningMiddleware.canonicalString(for: request) == "body=[1,2]&ts=9")
    }

    @Test func commonArgumentsInTheBodyAreSignedAndResignedOnRetry() async throws {
        let attempts = SeedTally()
        try await withLoopback(handler: { _ in
            attempts.increment() == 1 ? .text("busy", status: 503) : .text("ok")
        }) { server, _, transport in
            let times = SeedTally()
            let signing = SigningMiddleware(
                secret: "s", output: .header(HTTPField.Name("X-Sign")!), timestampParameter: "ts",
                now: { Date(timeIntervalSince1970: Double(times.increment())) })
            let client = client(
                server, transport,
                [
                    RetryMiddleware(maximumAttempts: 2, baseDelay: .milliseconds(1)),
                    CommonArgumentsMiddleware(parameters: ["v": "2.1"], placement: .alongsideParameters),
                    signing,
                ])
            struct Put: Endpoint {
                typealias Response = String
                var method: HTTPRequest.Method { .put }
                var path: String { "notes/1" }
                var parameters: [String: ParameterValue] { ["title": "hi"] }
                var parameterEncoding: ParameterEncoding { .json }
            }
            _ = try await client.send(Put())
            let seen = server.requests
            #expect(seen.count == 2)
            #expect(seen.map(\.uri) == ["/notes/1?ts=1", "/notes/1?ts=2"])
            #expect(seen.map(\.bodyText) == [#"{"title":"hi","v":"2.1"}"#, #"{"title":"hi","v":"2.1"}"#])
            for (index, request) in seen.enumerated() {
                let canonical = "title=hi&ts=\(index + 1)&v=2.1"
                #expect(request.header("X-Sign") == SigningMiddleware.signature(of: canonical, secret: "s", algorithm: .md5))
            }
        }
    }
}
