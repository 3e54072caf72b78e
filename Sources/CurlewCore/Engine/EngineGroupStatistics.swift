/// The counters of a transport's engines (``EngineStatistics``), summed when read: each read
/// loads every engine's atomics, so a transport's numbers are as current as its engines'.
package struct EngineGroupStatistics: Sendable {
    /// Each engine's counters, in engine order.
    package let engines: [EngineStatistics]

    /// Transfers attached to a multi handle now, over all engines.
    package var activeTransfers: Int { engines.reduce(0) { $0 + $1.activeTransfers } }
    /// Transfers whose receive side is paused now, over all engines.
    package var pausedTransfers: Int { engines.reduce(0) { $0 + $1.pausedTransfers } }
    /// Receive pauses so far, over all engines.
    package var receivePauses: Int { engines.reduce(0) { $0 + $1.receivePauses } }
    /// Connections (and attempts) open now, over all engines.
    package var openConnections: Int { engines.reduce(0) { $0 + $1.openConnections } }
    /// Connections opened so far, over all engines.
    package var connectionsOpened: Int { engines.reduce(0) { $0 + $1.connectionsOpened } }
    /// Idle cached connections, over all engines (each counted about once a second).
    package var idleConnections: Int { engines.reduce(0) { $0 + $1.idleConnections } }
    /// Transfers waiting in per-host queues, over all engines.
    package var queuedTransfers: Int { engines.reduce(0) { $0 + $1.queuedTransfers } }
    /// Connection attempts retried so far, over all engines.
    package var connectRetries: Int { engines.reduce(0) { $0 + $1.connectRetries } }
    /// Transfers ended by a drain deadline so far, over all engines.
    package var drainedTransfers: Int { engines.reduce(0) { $0 + $1.drainedTransfers } }
    /// Idle connections seen closed by their server, over all engines.
    package var halfClosedConnectionsSeen: Int { engines.reduce(0) { $0 + $1.halfClosedConnectionsSeen } }
}
