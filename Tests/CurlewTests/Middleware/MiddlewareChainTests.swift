import Curlew
import Foundation
import HTTPTypes
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// Appends "name>" on the way in and "<name" on the way out.
struct RecordingMiddleware: APIMiddleware {
    let name: String
    let log: Counter2

    func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        log.append("\(name)>")
        var request = request
        request.headers[HTTPField.Name("X-Seen-\(name)")!] = "1"
        defer { log.append("<\(name)") }
        return try await next(request, context)
    }
}

/// A thread-safe list of strings.
final class Counter2: Sendable {
    private let items = Mutex<[String]>([])
    func append(_ item: String) { items.withLock { $0.append(item) } }
    var all: [String] { items.withLock { $0 } }
}

struct EnvelopedPicture: Codable, Sendable, Equatable {
    var id: Int
    var title: String
}

struct GetEnveloped: Endpoint {
    typealias Response = EnvelopedPicture
    var path: String
    var envelope: ResponseEnvelope? = nil
}

/// The same family of endpoints, wanting the body as it is (no envelope in its type).
struct GetRawEnvelope: Endpoint {
    typealias Response = String
    var path: String
}

@Suite("Middleware chain")
struct MiddlewareChainTests {
    func client(_ server: LoopbackServer, _ transport: CurlTransport, _ middleware: [any APIMiddleware]) -> APIClient {
        APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: middleware), transport: transport)
    }

    @Test func firstRegisteredSeesTheRequestFirstAndTheResponseLast() async throws {
        let log = Counter2()
        try await withLoopback(handler: { request in
            log.append("server saw \(["1", "2", "3"].filter { request.header("X-Seen-\($0)") != nil }.joined())")
            return .text("ok")
        }) { server, _, transport in
            let client = client(server, transport, ["1", "2", "3"].map { RecordingMiddleware(name: $0, log: log) })
            _ = try await client.send(Send(path: "x"))
            #expect(log.all == ["1>", "2>", "3>", "server saw 123", "<3", "<2", "<1"])
        }
    }

    @Test func requestMiddlewareRunsInsideAndKindsCanBeSkipped() async throws {
        struct Skipping: Endpoint {
            typealias Response = String
            let extra: RecordingMiddleware
            var path: String { "x" }
            var options: RequestOptions {
                RequestOptions(middleware: [extra], skippedMiddleware: [MiddlewareKind("RecordingMiddleware")])
            }
        }
        let log = Counter2()
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            let client = client(server, transport, [RecordingMiddleware(name: "client", log: log)])
            _ = try await client.send(Send(path: "x"))
            _ = try await client.send(Skipping(extra: RecordingMiddleware(name: "request", log: log)))
            #expect(log.all == ["client>", "<client"])
        }
    }

    @Test func middlewareSeeRawBytesAndDecodingRunsOnceAfterTheChain() async throws {
        struct Observer: APIMiddleware {
            let log: Counter2
            func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
                let response = try await next(request, context)
                log.append("raw \(response.status.code) \(String(decoding: response.body, as: UTF8.self))")
                return response
            }
        }
        let log = Counter2()
        try await withLoopback(handler: { request in
            request.path == "/good" ? .json(#"{"id":1,"title":"a"}"#) : .json(#"{"id":"x","title":"a"}"#)
        }) { server, _, transport in
            let client = client(server, transport, [Observer(log: log)])
            let good = try await client.send(GetEnveloped(path: "good"))
            #expect(good == EnvelopedPicture(id: 1, title: "a"))
            let error = await #expect(throws: CurlewError.self) { try await client.send(GetEnveloped(path: "bad")) }
            #expect(error?.code == .decodingFailed)
            #expect(error?.dataPath == "id")
            #expect(error?.stage == .decoding)
            // The middleware saw both bodies as bytes; the decoding error happened after it returned.
            #expect(log.all == [#"raw 200 {"id":1,"title":"a"}"#, #"raw 200 {"id":"x","title":"a"}"#])
        }
    }

    @Test func aMiddlewareAnswersFromStoredBytesAndTheEndpointStillDecodesThem() async throws {
        /// Answers every request itself, without calling `next` (what a cache or a fixture does).
        struct StoredAnswer: APIMiddleware {
            let body: String
            func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
                RawResponse(status: .ok, headers: [.contentType: "application/json"], body: Data(body.utf8), url: request.url, source: .mock)
            }
        }
        struct Checked: Endpoint {
            typealias Response = [ValidatedPicture]
            let seen: Counter2
            var path: String { "stored" }
            var envelope: ResponseEnvelope? { .codeMsgData }
            func didReceive(_ response: RawResponse) throws {
                seen.append("didReceive \(String(decoding: response.body, as: UTF8.self))")
            }
        }
        let seen = Counter2()
        try await withLoopback(handler: { _ in .text("the network must not be used") }) { server, _, transport in
            let good = client(server, transport, [StoredAnswer(body: #"{"code":0,"msg":"from the shelf","data":[{"id":3,"title":"dunes"}]}"#)])
            let response = try await good.response(for: Checked(seen: seen))
            #expect(response.value.map(\.id) == [3])
            #expect(response.source == .mock)
            #expect(response.businessCode == "0")
            #expect(response.businessMessage == "from the shelf")
            #expect(seen.all == [#"didReceive [{"id":3,"title":"dunes"}]"#], "didReceive sees the envelope's payload")

            let business = client(server, transport, [StoredAnswer(body: #"{"code":7,"msg":"stale","data":null}"#)])
            let businessError = await #expect(throws: CurlewError.self) { try await business.send(Checked(seen: seen)) }
            #expect(businessError?.code == .serverError)
            #expect(businessError?.businessCode == "7")
            #expect(businessError?.stage == .envelope)

            let invalid = client(server, transport, [StoredAnswer(body: #"{"code":0,"msg":"","data":[{"id":-1,"title":"x"}]}"#)])
            let validation = await #expect(throws: CurlewError.self) { try await invalid.send(Checked(seen: seen)) }
            #expect(validation?.code == .validationFailed)
            #expect(validation?.stage == .decoding)
            #expect(server.requests.isEmpty, "no byte reached the server")
        }
    }

    @Test func loginRequiredWithoutCredentialSendsNothing() async throws {
        try await withLoopback(handler: { _ in .json(#"{"id":1,"title":"a"}"#) }) { server, _, transport in
            let client = client(server, transport, [AuthorizationMiddleware(store: TokenStore())])
            let error = await #expect(throws: CurlewError.self) {
                try await client.send(GetEnveloped(path: "me")) { $0.requiresAuthentication = true }
            }
            #expect(error?.code == .notLoggedIn)
            #expect(error?.level == .auth)
            _ = try await client.send(GetEnveloped(path: "public"))
            #expect(server.requests.map(\.path) == ["/public"])
            #expect(server.requests.first?.header("Authorization") == nil)
        }
    }

    @Test func authorizationHeaderNameAndSchemeAreConfigurable() async throws {
        try await withLoopback(handler: { request in .text(request.header("X-Token") ?? "none") }) { server, _, transport in
            let store = TokenStore(credential: .init(accessToken: "abc"))
            let client = client(server, transport, [AuthorizationMiddleware(store: store, headerName: HTTPField.Name("X-Token")!, scheme: "")])
            let value = try await client.send(Send(path: "x"))
            #expect(value == "abc")
        }
    }

    @Test func commonArgumentsAreAddedAndOverridablePerRequest() async throws {
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            let common = CommonArgumentsMiddleware(parameters: ["v": "2.1", "platform": "linux"], headers: ["X-Device": "d1", "X-Session": "s1"])
            let client = client(server, transport, [common])
            _ = try await client.send(Send(path: "a", query: [URLQueryItem(name: "q", value: "x")]))
            _ = try await client.send(Send(path: "b", query: [URLQueryItem(name: "v", value: "9")], headers: ["X-Device": "mine"]))
            let seen = server.requests
            #expect(seen[0].uri == "/a?q=x&platform=linux&v=2.1")
            #expect(seen[0].header("X-Device") == "d1")
            #expect(seen[0].header("X-Session") == "s1")
            #expect(seen[1].uri == "/b?v=9&platform=linux")
            #expect(seen[1].header("X-Device") == "mine")
        }
    }

    @Test(arguments: [
        (ResponseEnvelope.codeMsgData, #"{"code":0,"msg":"ok","data":{"id":7,"title":"t"}}"#),
        (ResponseEnvelope.okMessageResult, #"{"ok":true,"message":"","result":{"id":7,"title":"t"}}"#),
        (ResponseEnvelope.okMessageResult, #"{"ok":1,"message":"","result":{"id":7,"title":"t"}}"#),
        (ResponseEnvelope.cnp, #"{"c":200,"n":"","p":{"id":7,"title":"t"},"h":1,"m":0}"#),
        (ResponseEnvelope.cnp, #"{"c":201,"n":"created","p":{"id":7,"title":"t"}}"#),
        (ResponseEnvelope.cnp, #"{"c":299,"n":"","p":{"id":7,"title":"t"}}"#),
        (ResponseEnvelope.statusMsg, #"{"status":"0","msg":"fine","id":7,"title":"t"}"#),
    ])
    func envelopeVariantsUnwrapThePayload(envelope: ResponseEnvelope, body: String) async throws {
        try await withLoopback(handler: { _ in .json(body) }) { server, _, transport in
            let client = client(server, transport, [])
            let response = try await client.response(for: GetEnveloped(path: "p", envelope: envelope))
            #expect(response.value == EnvelopedPicture(id: 7, title: "t"))
            #expect(response.body == Data(body.utf8), "the raw body is kept beside the value")
        }
    }

    @Test(arguments: [
        (ResponseEnvelope.okMessageResult, #"{"ok":false,"message":"no","result":null}"#, "false"),
        (ResponseEnvelope.okMessageResult, #"{"ok":0,"message":"no","result":null}"#, "0"),
        (ResponseEnvelope.cnp, #"{"c":199,"n":"no","p":null}"#, "199"),
        (ResponseEnvelope.cnp, #"{"c":300,"n":"no","p":null}"#, "300"),
        (ResponseEnvelope.cnp, #"{"c":404,"n":"no","p":null}"#, "404"),
    ])
    func envelopeVariantsRefuseOtherCodes(envelope: ResponseEnvelope, body: String, code: String) async throws {
        try await withLoopback(handler: { _ in .json(body) }) { server, _, transport in
            let client = client(server, transport, [])
            let error = await #expect(throws: CurlewError.self) { try await client.send(GetEnveloped(path: "p", envelope: envelope)) }
            #expect(error?.code == .serverError)
            #expect(error?.businessCode == code)
            #expect(error?.message == "no")
        }
    }

    @Test func businessErrorsMalformedEnvelopesAndOptingOut() async throws {
        try await withLoopback(handler: { request in
            switch request.path {
            case "/private": .json(#"{"code":1001,"msg":"this picture is private","data":null}"#)
            case "/html": .text("<html>maintenance</html>")
            case "/nocode": .json(#"{"msg":"where is the code","data":{}}"#)
            case "/badpayload": .json(#"{"code":0,"msg":"ok","data":{"id":"seven","title":"t"}}"#)
            default: .json(#"{"code":0,"msg":"ok","data":{"id":1,"title":"t"}}"#)
            }
        }) { server, _, transport in
            let client = client(server, transport, [])
            let business = await #expect(throws: CurlewError.self) { try await client.send(GetEnveloped(path: "private", envelope: .codeMsgData)) }
            #expect(business?.level == .server)
            #expect(business?.businessCode == "1001")
            #expect(business?.message == "this picture is private")
            #expect(business?.bodySnippet?.contains("1001") == true)
            #expect(business?.responseBody == Data(#"{"code":1001,"msg":"this picture is private","data":null}"#.utf8))

            for path in ["html", "nocode"] {
                let malformed = await #expect(throws: CurlewError.self) { try await client.send(GetEnveloped(path: path, envelope: .codeMsgData)) }
                #expect(malformed?.level == .dataFormat)
            }
            let payload = await #expect(throws: CurlewError.self) { try await client.send(GetEnveloped(path: "badpayload", envelope: .codeMsgData)) }
            #expect(payload?.dataPath == "data.id")
            #expect(payload?.message == "data.id: expected Int, found string")

            let raw = try await client.send(GetRawEnvelope(path: "private"))
            #expect(raw == #"{"code":1001,"msg":"this picture is private","data":null}"#)
        }
    }
}

/// A picture whose id must be positive.
struct ValidatedPicture: Decodable, Sendable, ValidatableModel {
    var id: Int
    var title: String

    func validate() throws {
        guard id > 0 else { throw ValidationFailure("must be positive, got \(id)", field: "id") }
    }
}
