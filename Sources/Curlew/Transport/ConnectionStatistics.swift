/// A transport's connections at one moment (``CurlTransport/connectionStatistics``): what a
/// service exports as gauges to see its pool grow under load and shrink when idle.
public struct ConnectionStatistics: Sendable, Hashable {
    /// Connections open now, idle or in use (and connection attempts under way).
    public var openConnections: Int
    /// Pooled connections no transfer uses, as the engines last counted them (about once a
    /// second). Exact while no transfer runs; under load an estimate (open connections less one
    /// per transfer in flight, low when HTTP/2 transfers share a connection).
    public var idleConnections: Int
    /// Connections opened since the transport started.
    public var connectionsOpened: Int
    /// Transfers attached to a connection (or connecting) now.
    public var transfersInFlight: Int
    /// Transfers waiting for a connection under ``CurlTransport/Configuration/maximumConnectionsPerHost``.
    public var queuedForConnection: Int
    /// Connection attempts retried since the transport started
    /// (``CurlTransport/Configuration/connectRetry``).
    public var connectRetries: Int

    /// Creates statistics from their counts.
    public init(
        openConnections: Int, idleConnections: Int, connectionsOpened: Int, transfersInFlight: Int,
        queuedForConnection: Int, connectRetries: Int
    ) {
        self.openConnections = openConnections
        self.idleConnections = idleConnections
        self.connectionsOpened = connectionsOpened
        self.transfersInFlight = transfersInFlight
        self.queuedForConnection = queuedForConnection
        self.connectRetries = connectRetries
    }
}
