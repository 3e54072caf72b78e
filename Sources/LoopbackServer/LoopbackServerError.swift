/// Errors reported by ``LoopbackServer`` and the values it hands to request handlers.
public enum LoopbackServerError: Error, Sendable, Equatable {
    /// The connection a response was being written to is closed (usually: the client went away).
    case connectionClosed
    /// The server is shutting down and no longer accepts work.
    case shuttingDown
    /// The listening socket did not report a local address, so the port is unknown.
    case missingLocalAddress
}
