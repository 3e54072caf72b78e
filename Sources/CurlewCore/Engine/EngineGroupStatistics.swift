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
}
