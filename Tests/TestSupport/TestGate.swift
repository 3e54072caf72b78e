package import LoopbackServer
import Synchronization

/// A flag a test opens once, for holding a server's answer or a refresh until the test has seen
/// what happens meanwhile (the deadline tests of CurlewTests and CurlewResilienceTests).
package final class TestGate: Sendable {
    /// Whether it is open, guarded by the mutex.
    private let state = Mutex(false)

    package init() {}

    /// Opens the gate.
    package func open() { state.withLock { $0 = true } }

    /// Whether the gate is open.
    package var isOpen: Bool { state.withLock { $0 } }

    /// Answers `/n/1` only once the gate opens (or its connection closes), everything else at
    /// once; the answer is the path as text.
    package var holdingFirstNumber: @Sendable (ServerRequest) async -> ServerResponse {
        { request in
            if request.path == "/n/1" {
                while !self.isOpen, !request.connection.isClosed { try? await Task.sleep(for: .milliseconds(5)) }
            }
            return .text(request.path)
        }
    }
}
