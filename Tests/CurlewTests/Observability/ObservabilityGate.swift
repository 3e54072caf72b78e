import Foundation
import LoopbackServer
import Synchronization

/// A gate a loopback handler waits at until the test opens it (instead of a timing).
final class ObservabilityGate: Sendable {
    private let open = Mutex(false)
    /// Lets waiting handlers go on.
    func release() { open.withLock { $0 = true } }
    /// Whether the gate is open.
    var isOpen: Bool { open.withLock { $0 } }

    /// Waits until the gate opens or the client's connection is gone.
    func wait(_ request: ServerRequest) async {
        while !isOpen, !request.connection.isClosed { try? await Task.sleep(for: .milliseconds(5)) }
    }

    /// A 2,000-byte body sent raw with `Content-Length`: 1,000 `a`, then, once the gate opens,
    /// 1,000 `b`.
    func gatedBody(_ request: ServerRequest) -> ServerResponse {
        .stream(headers: [("Content-Type", "application/octet-stream"), ("Content-Length", "2000")]) { writer in
            try await writer.write(Array(repeating: UInt8(ascii: "a"), count: 1000))
            await self.wait(request)
            try await writer.write(Array(repeating: UInt8(ascii: "b"), count: 1000))
        }
    }
}
