import Curlew
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// A caller waiting for a refresh someone else started stops waiting as soon as it is cancelled;
/// the refresh carries on for everyone else.
@Suite("Cancelling a refresh waiter")
struct RefreshWaitCancellationTests {
    @Test func aCancelledWaiterReturnsCancellationErrorPromptlyAndTheRefreshCarriesOn() async throws {
        let auth = AuthServerState()
        auth.state.withLock { $0.holdsRefresh = true }
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
            waiter.cancel()
            let outcome = await waiter.result
            guard case .failure(let error) = outcome else {
                Issue.record("the cancelled waiter succeeded")
                return
            }
            #expect(error is CancellationError, "got \(error)")
            // The refresh is held at the server until the test opens the gate: the waiter
            // returned while it was still in flight (an ordering, not a timing).
            #expect(auth.refreshCalls == 0, "the refresh had not finished when the waiter returned")
            auth.state.withLock { $0.holdsRefresh = false }
            #expect(try await starter.value == "hello T2")
            for other in others { #expect(try await other.value == "hello T2") }
            #expect(auth.refreshCalls == 1)
            #expect(await store.refreshCount == 1)
        }
    }
}
