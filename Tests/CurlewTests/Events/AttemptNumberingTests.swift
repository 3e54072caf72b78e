import Curlew
import Foundation
import HTTPTypes
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// A call numbers its transport attempts 1, 2, 3… in the `attempt` events and in
/// `MiddlewareContext.attempt`, however they came about: a retry inside a token refresh is
/// counted by the refresh that resends after it.
@Suite("Attempt numbering", .timeLimit(.minutes(1)))
struct AttemptNumberingTests {
    /// Records the attempt number each send carries, as the documentation's `X-Request-ID`
    /// middleware would write it; innermost, after signing.
    final class Counts: Sendable {
        let seen = Mutex<[Int]>([])
        let requests = Mutex(0)
    }

    struct AttemptRecorder: APIMiddleware {
        let counts: Counts
        var phase: MiddlewarePhase? { MiddlewarePhase(rank: 950, name: "attemptRecorder") }
        func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
            counts.seen.withLock { $0.append(context.attempt) }
            return try await next(request, context)
        }
    }

    /// `/busy-then-expired`: 503 first, then 401 until the token is `new`.
    private func handler(_ counts: Counts) -> @Sendable (ServerRequest) async -> ServerResponse {
        { request in
            let n = counts.requests.withLock {
                $0 += 1
                return $0
            }
            if n == 1 { return .text("busy", status: 503) }
            if request.header("Authorization") == "Bearer new" { return .text("ok") }
            return .text("expired", status: 401)
        }
    }

    @Test func aRetryThenARefreshNumbersThreeAttempts() async throws {
        let counts = Counts()
        let recorder = AttemptRecorder(counts: counts)
        try await withLoopback(handler: handler(counts)) { server, _, transport in
            let store = TokenStore(credential: .init(accessToken: "old", refreshToken: "r"))
            let client = APIClient(
                configuration: ClientConfiguration(
                    baseURL: server.baseURL,
                    middleware: [
                        AuthorizationMiddleware(store: store), RetryMiddleware(baseDelay: .milliseconds(1)), recorder,
                        TokenRefreshMiddleware(store: store) { old in .init(accessToken: "new", refreshToken: old.refreshToken) },
                    ]),
                transport: transport)
            let events = client.events
            let answer = try await client.send(Send(path: "busy-then-expired"))
            #expect(answer == "ok")
            var numbered: [String] = []
            for await event in events {
                switch event.kind {
                case .attempt, .retryScheduled: numbered.append("\(event.kind) \(event.attempt ?? 0)")
                case .credentialRefreshed: numbered.append("\(event.kind)")
                default: break
                }
                if event.kind == .finished || event.kind == .failed { break }
            }
            #expect(numbered == ["attempt 1", "retryScheduled 2", "attempt 2", "credentialRefreshed", "attempt 3"])
            #expect(server.requestCount == 3)
        }
        #expect(counts.seen.withLock { $0 } == [1, 2, 3])
    }

    /// The refresh's own limit still counts only its sends: after a retried 503, a permanent 401
    /// gets the first send and two resends, "after 3 attempts", and the call made four in all.
    @Test func theRefreshLimitCountsItsOwnSendsOnly() async throws {
        let counts = Counts()
        let recorder = AttemptRecorder(counts: counts)
        try await withLoopback(handler: handler(counts)) { server, _, transport in
            let store = TokenStore(credential: .init(accessToken: "old", refreshToken: "r"))
            let client = APIClient(
                configuration: ClientConfiguration(
                    baseURL: server.baseURL,
                    middleware: [
                        AuthorizationMiddleware(store: store), RetryMiddleware(baseDelay: .milliseconds(1)), recorder,
                        TokenRefreshMiddleware(store: store) { old in .init(accessToken: old.accessToken + "+", refreshToken: old.refreshToken) },
                    ]),
                transport: transport)
            let error = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "busy-then-expired")) }
            #expect(error?.code == .unauthorized)
            #expect(error?.message == "still unauthorized after 3 attempts")
            #expect(server.requestCount == 4)
        }
        #expect(counts.seen.withLock { $0 } == [1, 2, 3, 4])
    }
}
