@testable import Curlew
@testable import CurlewResilience
import Foundation
import LoopbackServer
import Testing
import TestSupport

/// A deadline ends a wait for the adaptive limiter's slot, not only the call's attempts (the other
/// waits: CurlewTests' `DeadlineWaitTests`): the waiting call leaves with `.deadlineExceeded` when
/// the deadline passes, is never sent, and leaves the slot accounting as it found it.
///
/// The waiting call would otherwise wait until the test opens its gate, which happens only after
/// the call has failed: without the deadline ending the wait, the test runs into its time limit.
@Suite("Deadlines end the adaptive limiter's waits", .timeLimit(.minutes(1)))
struct AdaptiveConcurrencyDeadlineTests {
    @Test func aCallWaitingForTheAdaptiveLimiterFailsAtItsDeadline() async throws {
        let gate = TestGate()
        try await withLoopback(handler: gate.holdingFirstNumber) { server, _, transport in
            // One slot, one place in line: a leaked slot or a stale waiter would shed the last call.
            let limiter = AdaptiveConcurrencyMiddleware(
                policy: .init(initialLimit: 1, minimumLimit: 1, maximumLimit: 1, latencyThreshold: .seconds(60), maximumWaiting: 1))
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [limiter]), transport: transport)
            let first = Task { try await client.send(Numbered(index: 1)) }
            await waitForRequests(server, count: 1)
            let error = await #expect(throws: CurlewError.self) {
                try await withDeadline(in: .milliseconds(200)) { try await client.send(Numbered(index: 2)) }
            }
            #expect(error?.code == .deadlineExceeded)
            #expect(error?.stage == .deadline)
            #expect(limiter.waiting(at: server.baseURL) == 0)
            #expect(server.requestCount == 1)
            gate.open()
            let answer5 = try await first.value
            #expect(answer5 == "/n/1")
            let answer6 = try await client.send(Numbered(index: 3))
            #expect(answer6 == "/n/3")
            let answer7 = try await client.send(Numbered(index: 4))
            #expect(answer7 == "/n/4")
            #expect(server.requests.map(\.uri) == ["/n/1", "/n/3", "/n/4"])
        }
    }
}
