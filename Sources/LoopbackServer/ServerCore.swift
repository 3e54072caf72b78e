import NIOCore
import Synchronization

/// What a ``LoopbackServer`` shares with its connection handlers: the request handler, the
/// statistics and the registry of open child channels (guarded by `registry`).
final class ServerCore: Sendable {
    private struct Registry {
        var isShuttingDown = false
        var lastConnectionID = 0
        var channels: [Int: any Channel] = [:]
    }

    let handler: @Sendable (ServerRequest) async -> ServerResponse
    /// Whether the body of a request (method, path without query) is counted and dropped.
    let discardsBody: @Sendable (_ method: String, _ path: String) -> Bool
    let statistics = ServerStatistics()
    private let registry = Mutex(Registry())

    init(
        discardsBody: @escaping @Sendable (_ method: String, _ path: String) -> Bool = { _, _ in false },
        handler: @escaping @Sendable (ServerRequest) async -> ServerResponse
    ) {
        self.discardsBody = discardsBody
        self.handler = handler
    }

    var isShuttingDown: Bool {
        registry.withLock { $0.isShuttingDown }
    }

    /// Registers a freshly accepted channel and returns its 1-based connection ID, or `nil`
    /// when the server is shutting down (the caller must then close the channel).
    func register(_ channel: any Channel) -> Int? {
        registry.withLock { registry -> Int? in
            guard !registry.isShuttingDown else {
                return nil
            }
            registry.lastConnectionID += 1
            registry.channels[registry.lastConnectionID] = channel
            return registry.lastConnectionID
        }
    }

    func unregister(connectionID: Int) {
        registry.withLock { _ = $0.channels.removeValue(forKey: connectionID) }
    }

    /// Stops accepting connections and returns the ones still open.
    func beginShutdown() -> [any Channel] {
        registry.withLock { registry in
            registry.isShuttingDown = true
            return Array(registry.channels.values)
        }
    }
}
