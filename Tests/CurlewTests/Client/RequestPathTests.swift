import Curlew
import CurlewTesting
import Foundation
import HTTPTypes
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// A thrown error a user's middleware might have.
struct QuotaExceeded: Error, Equatable {}

/// A user middleware that refuses every request with a non-Curlew error.
struct QuotaGuard: APIMiddleware {
    func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        throw QuotaExceeded()
    }
}

@Suite("The request path: origins, phases, configuration errors, stages, cancellation")
struct RequestPathTests {
    /// A client for `server` with token, signature (header) and common arguments.
    func securedClient(_ server: LoopbackServer, _ transport: CurlTransport, middleware extra: [any APIMiddleware] = []) -> APIClient {
        let store = TokenStore(credential: .init(accessToken: "t0k3n"))
        return APIClient(
            configuration: ClientConfiguration(
                baseURL: server.baseURL,
                middleware: [
                    AuthorizationMiddleware(store: store),
                    CommonArgumentsMiddleware(parameters: ["session": "s-42"], headers: ["X-Device": "d1"]),
                    SigningMiddleware(secret: "k", output: .header(HTTPField.Name("X-Sign")!)),
                ] + extra),
            transport: transport)
    }

    @Test func anotherOriginGetsNoCredentialSignatureOrCommonArguments() async throws {
        let cdn = try await LoopbackServer.start { _ in .text("image bytes") }
        defer { Task { await cdn.shutdown() } }
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            let client = securedClient(server, transport)
            _ = try await client.send(Send(path: "own"))
            _ = try await client.send(Send(path: cdn.baseURL + "/images/1.jpg"))
            _ = try await client.send(Send(path: cdn.baseURL + "/images/2.jpg")) { $0.trustedOrigins = [cdn.baseURL] }

            let own = try #require(server.requests.first)
            #expect(own.header("Authorization") == "Bearer t0k3n")
            #expect(own.header("X-Sign")?.count == 32)
            #expect(own.header("X-Device") == "d1")
            #expect(own.queryValue("session") == "s-42")

            let seen = cdn.requests
            #expect(seen.count == 2)
            #expect(seen[0].uri == "/images/1.jpg", "no common arguments in the query")
            #expect(seen[0].header("Authorization") == nil)
            #expect(seen[0].header("X-Sign") == nil)
            #expect(seen[0].header("X-Device") == nil)
            #expect(seen[1].header("Authorization") == "Bearer t0k3n", "a call may trust another origin explicitly")
            #expect(seen[1].queryValue("session") == "s-42")
        }
        await cdn.shutdown()
    }

    @Test func misorderedBuiltInsArePlacedByPhase() async throws {
        // Signing registered first and common arguments last: the signature must still cover the
        // common arguments, so the server's recomputation matches.
        try await withLoopback(handler: { request in
            let pairs = request.queryItems.filter { $0.name != "sign" }.sorted { ($0.name, $0.value) < ($1.name, $1.value) }
            let canonical = pairs.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
            let expected = SigningMiddleware.signature(of: canonical, secret: "k", algorithm: .md5)
            return request.queryValue("sign") == expected ? .text("signed \(canonical)") : .text("bad signature", status: 403)
        }) { server, _, transport in
            let client = APIClient(
                configuration: ClientConfiguration(
                    baseURL: server.baseURL,
                    middleware: [
                        SigningMiddleware(secret: "k", timestampParameter: "ts"),
                        CommonArgumentsMiddleware(parameters: ["v": "2"]),
                    ]),
                transport: transport)
            let answer = try await client.send(Send(path: "x", query: [URLQueryItem(name: "q", value: "fog")]))
            #expect(answer.hasPrefix("signed q=fog&ts="))
            #expect(answer.hasSuffix("&v=2"))
        }
    }

    @Test func authorizationRegisteredOutsideRefreshStillSendsTheFreshTokenOnce() async throws {
        let tokens = Mutex<[String]>([])
        try await withLoopback(handler: { request in
            let token = request.header("Authorization") ?? "-"
            tokens.withLock { $0.append(token) }
            return token == "Bearer new" ? .text("hello") : .text("expired", status: 401)
        }) { server, _, transport in
            let store = TokenStore(credential: .init(accessToken: "old", refreshToken: "r"))
            let client = APIClient(
                configuration: ClientConfiguration(
                    baseURL: server.baseURL,
                    middleware: [
                        AuthorizationMiddleware(store: store),
                        TokenRefreshMiddleware(store: store) { _ in .init(accessToken: "new", refreshToken: "r2") },
                    ]),
                transport: transport)
            let answer = try await client.send(Send(path: "me"))
            #expect(answer == "hello")
            #expect(tokens.withLock { $0 } == ["Bearer old", "Bearer new"], "the stale token is sent once, never resent")
            #expect(await store.refreshCount == 1)
        }
    }

    @Test func loginRequiredOnAClientWithoutCredentialSourceFailsBeforeSending() async throws {
        try await withLoopback(handler: { _ in .text("ok") }) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) {
                try await client.send(Send(path: "me")) { $0.requiresAuthentication = true }
            }
            #expect(error?.code == .missingCredentialSource)
            #expect(error?.stage == .configuration)
            #expect(error?.message.contains("Send requires authentication") == true)
            #expect(server.requestCount == 0)
        }
    }

    @Test func aUserMiddlewaresErrorComesOutAsCurlewErrorWithItsStage() async throws {
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [QuotaGuard()]), transport: transport)
            let error = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "x")) }
            #expect(error?.code == .middlewareFailed)
            #expect(error?.stage == .middleware(MiddlewareKind("QuotaGuard")))
            #expect(error?.underlying as? QuotaExceeded == QuotaExceeded())
            #expect(error?.request?.description == "GET \(server.baseURL)/x")
            #expect(server.requestCount == 0)
        }
    }

    @Test func stagesNameTransportStatusAndDecoding() async throws {
        try await withLoopback(handler: { request in
            request.path == "/missing" ? .text("no", status: 404) : .json(#"{"id":"x","title":"t"}"#)
        }) { server, client, _ in
            let status = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "missing")) }
            #expect(status?.stage == .status)
            let decoding = await #expect(throws: CurlewError.self) { try await client.send(GetEnveloped(path: "bad")) }
            #expect(decoding?.stage == .decoding)
            let refused = APIClient(baseURL: refusingBaseURL, transport: CurlTransport.shared)
            let transport = await #expect(throws: CurlewError.self) { try await refused.send(Send(path: "x")) }
            #expect(transport?.stage == .transport)
            #expect(transport?.code == .cannotConnect)
        }
    }

    @Test func cancellationInARetryBackOffIsACancellationError() async throws {
        // Retry-After fixes the back-off at 30 s: full jitter alone may pick a wait of a few
        // milliseconds, and the second attempt would go out before the cancel.
        try await withLoopback(handler: { _ in ServerResponse(status: 503, headers: [("Retry-After", "30")], body: Array("busy".utf8)) }) {
            server, _, transport in
            let client = APIClient(
                configuration: ClientConfiguration(
                    baseURL: server.baseURL,
                    middleware: [
                        RetryMiddleware(maximumAttempts: 3, baseDelay: .seconds(30), maximumDelay: .seconds(30), maximumTotalTime: .seconds(120))
                    ]),
                transport: transport)
            let task = Task { try await client.send(Send(path: "x")) }
            await waitForRequests(server, count: 1)
            try await Task.sleep(for: .milliseconds(20))
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(server.requestCount == 1)
        }
    }

    @Test func cancellationWhileWaitingInAQueueIsACancellationError() async throws {
        try await withLoopback(handler: { _ in .text("ok") }) { server, client, _ in
            await client.queues.hold("q")
            let task = Task { try await client.send(Send(path: "x"), queue: "q") }
            _ = await eventually { await client.queues.status(of: "q").waiting == 1 }
            task.cancel()
            do {
                _ = try await task.value
                Issue.record("the call must not succeed")
            } catch is CancellationError {
                // the documented shape
            }
            #expect(server.requestCount == 0)
        }
    }

    /// The refresh never ends while the test runs, so a waiter that did not leave it on
    /// cancellation would hang (the time limit), not come back late with another answer.
    @Test(.timeLimit(.minutes(2)))
    func cancellationDuringATokenRefreshIsACancellationError() async throws {
        try await withLoopback(handler: { _ in .text("expired", status: 401) }) { server, _, transport in
            let store = TokenStore(credential: .init(accessToken: "old", refreshToken: "r"))
            let refreshing = Mutex(false)
            let testEnded = Mutex(false)
            defer { testEnded.withLock { $0 = true } }
            let client = APIClient(
                configuration: ClientConfiguration(
                    baseURL: server.baseURL,
                    middleware: [
                        TokenRefreshMiddleware(store: store) { _ in
                            refreshing.withLock { $0 = true }
                            while !testEnded.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(20)) }
                            return .init(accessToken: "never")
                        },
                        AuthorizationMiddleware(store: store),
                    ]),
                transport: transport)
            let task = Task { try await client.send(Send(path: "me")) }
            _ = await eventually { refreshing.withLock { $0 } }
            task.cancel()
            await #expect(throws: CancellationError.self) { try await task.value }
            #expect(server.requestCount == 1)
        }
    }
}
