import Curlew
import Foundation
import HTTPTypes
import LoopbackServer
import Logging
import Synchronization
import Testing
import TestSupport

struct CanaryRequest: Endpoint {
    typealias Response = EnvelopedPicture
    var path: String
    var query: [URLQueryItem] {
        [URLQueryItem(name: "api_key", value: "CANARY-QK"), URLQueryItem(name: "access_token", value: "CANARY-QT"), URLQueryItem(name: "page", value: "1")]
    }
    var headers: [String: String] { ["X-Api-Key": "CANARY-HK", "Cookie": "session=CANARY-CK"] }

    func willSend(_ request: inout PreparedRequest) throws {
        if path == "hold" { request.options.totalTimeout = .milliseconds(300) }
    }
}

@Suite("Secrets stay out of logs and errors")
struct RedactionTests {
    @Test func canariesNeverAppearAcrossSuccessRefreshRedirectTimeoutAndDecodeErrors() async throws {
        let box = MemoryLogHandlerBox()
        var logger = Logger(label: "canary") { _ in MemoryLogHandler(box: box) }
        logger.logLevel = .trace
        let refreshed = Mutex(false)
        try await withLoopback(handler: { request in
            switch request.path {
            case "/auth/refresh":
                refreshed.withLock { $0 = true }
                return .text("CANARY-AT-2")
            case "/hold":
                await request.connection.closed()
                return .text("late")
            case "/redirect":
                return .redirect(to: "/ok")
            case "/missing":
                return .json(#"{"error":"no such thing"}"#, status: 404)
            case "/bad":
                return .json(#"{"id":"not a number","title":"t"}"#)
            default:
                let fresh = refreshed.withLock { $0 }
                if request.path == "/expired", !fresh { return .text("expired", status: 401) }
                return .json(#"{"id":1,"title":"t"}"#)
            }
        }) { server, _, transport in
            let store = TokenStore(credential: .init(accessToken: "CANARY-AT-1", refreshToken: "CANARY-RT"))
            let refreshURL = server.baseURL + "/auth/refresh"
            let middleware: [any APIMiddleware] = [
                TokenRefreshMiddleware(store: store) { credential in
                    let raw = try await transport.send(PreparedRequest(method: .post, url: refreshURL, body: Data((credential.refreshToken ?? "").utf8)))
                    return .init(accessToken: String(decoding: raw.body, as: UTF8.self), refreshToken: "CANARY-RT-2")
                },
                AuthorizationMiddleware(store: store),
                RetryMiddleware(maximumAttempts: 1),
                SigningMiddleware(secret: "CANARY-SECRET", output: .parameter("sign")),
            ]
            let client = APIClient(
                configuration: ClientConfiguration(baseURL: server.baseURL, middleware: middleware, logger: logger),
                transport: transport)

            var texts: [String] = []
            func record(_ error: any Error) {
                texts.append(String(describing: error))
                texts.append(String(reflecting: error))
                if let error = error as? CurlewError {
                    texts.append(error.message)
                    texts.append(error.request?.description ?? "")
                    texts.append(error.bodySnippet ?? "")
                }
            }
            _ = try await client.send(CanaryRequest(path: "ok"))
            _ = try await client.send(CanaryRequest(path: "expired"))
            _ = try await client.send(CanaryRequest(path: "redirect"))
            for path in ["hold", "bad", "missing"] {
                do { _ = try await client.send(CanaryRequest(path: path)) } catch { record(error) }
            }
            #expect(texts.count == 15, "three failures recorded")
            let logs = box.lines.withLock { $0 }
            #expect(logs.count >= 12)
            let everything = (texts + logs).joined(separator: "\n")
            #expect(!everything.contains("CANARY"), "leaked: \(everything.split(separator: "\n").filter { $0.contains("CANARY") })")
            #expect(everything.contains("api_key=<redacted>"))
            #expect(everything.contains("sign=<redacted>"))
            // The secrets did reach the server: the test would be vacuous otherwise.
            let ok = try #require(server.requests(path: "/ok").first)
            #expect(ok.header("Authorization") == "Bearer CANARY-AT-1")
            #expect(ok.queryValue("api_key") == "CANARY-QK")
            #expect(server.requests(path: "/expired").last?.header("Authorization") == "Bearer CANARY-AT-2")
        }
    }
}
