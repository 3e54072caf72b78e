@testable import Curlew
@testable import CurlewResilience
import Foundation
import LoopbackServer
import Testing
import TestSupport

/// The resilience pieces take their places by phase, whatever order they are registered in:
/// hedging → limiter → circuit breaker → retry.
@Suite("Resilience pipeline order")
struct ResiliencePipelineTests {
    @Test func phasesPutThePiecesInOrderWhateverTheRegistration() {
        let registered: [any APIMiddleware] = [
            RetryMiddleware(), CircuitBreakerMiddleware(), AdaptiveConcurrencyMiddleware(), HedgingMiddleware(delay: .milliseconds(50)),
        ]
        let arranged = MiddlewareArrangement.arrange(registered).map(\.kind)
        #expect(arranged == [.hedging, .limiter, .circuitBreaker, .retry])
        #expect(MiddlewarePhase.hedging < .limiter && MiddlewarePhase.limiter < .circuitBreaker && MiddlewarePhase.circuitBreaker < .retry)
    }

    /// Registered retry first, the breaker still runs outside it: one call makes all its
    /// attempts (three requests) and is one failure for the breaker, which then opens; the next
    /// call fails fast without a request.
    @Test func theBreakerSeesACallNotItsAttempts() async throws {
        try await withLoopback(handler: { _ in .text("down", status: 503) }) { server, _, transport in
            let middleware: [any APIMiddleware] = [
                RetryMiddleware(maximumAttempts: 3, baseDelay: .milliseconds(1), maximumDelay: .milliseconds(5)),
                CircuitBreakerMiddleware(policy: .init(failureRatio: 0.5, minimumThroughput: 1, breakDuration: .seconds(60))),
            ]
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: middleware), transport: transport)
            let first = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 1)) }
            #expect(first?.status?.code == 503)
            #expect(server.requestCount == 3)
            let second = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 2)) }
            #expect(second?.code == .circuitOpen)
            #expect(server.requestCount == 3)
        }
    }
}
