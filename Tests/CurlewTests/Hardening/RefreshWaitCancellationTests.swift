import Curlew
import Foundation
import LoopbackServer
import Synchronization
import Testing

/// A caller waiting for a refresh someone else started stops waiting as soon as it is cancelled;
/// the refresh carries on for everyone else.
@Suite("Cancelling a refresh waiter")
struct RefreshWaitCancellationTests {
    @Test func aCancelledWaiterReturnsCancellationErrorPromptlyAndTheRefreshCarriesOn() async throws {
        let auth = AuthServerState()
        auth.state.withLock { $0.refreshDelay = .milliseconds(800) }
        try await withLoopback(handler: { await auth.handle($0) }) { server, _, transport in
            let store = TokenStore(credential: .init(accessToken: "T1", refreshToken: "R1"))
            let client = TokenRefreshTests().makeClient(server, transport, store: store)
            let starter = Task { try await client.send(Secure()) }
            #expect(await eventually { server.requests(path: "/auth/refresh").count == 1 })
            let waiter = Task { try await client.send(Secure()) }
            let others = (0..<2).map { _ in Task { try await client.send(Secure()) } }
            await waitForRequests(server, count: 5)
            // The waiters' 401s are in; give them a moment to join the refresh.
            try await Task.sleep(for: .milliseconds(50))
            let cancelledAt = ContinuousClock.now
            waiter.cancel()
            let outcome = await waiter.result
            let waited = ContinuousClock.now - cancelledAt
            guard case .failure(let error) = outcome else {
                Issue.record("the cancelled waiter succeeded")
                return
            }
            #expect(error is CancellationError, "got \(error)")
            #expect(waited < .milliseconds(200), "returned after \(waited), the refresh takes 800 ms")
            #expect(auth.refreshCalls == 0, "the refresh had not finished when the waiter returned")
            #expect(try await starter.value == "hello T2")
            for other in others { #expect(try await other.value == "hello T2") }
            #expect(auth.refreshCalls == 1)
            #expect(await store.refreshCount == 1)
        }
    }
}
