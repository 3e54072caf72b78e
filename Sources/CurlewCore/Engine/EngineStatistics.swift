internal import Synchronization

/// Counters one engine keeps for tests and diagnostics; cheap atomics, written on the engine
/// thread and read anywhere.
package final class EngineStatistics: Sendable {
    private let active = Atomic<Int>(0)
    private let paused = Atomic<Int>(0)
    private let pauses = Atomic<Int>(0)

    /// Creates zeroed counters.
    package init() {}

    /// Transfers attached to the multi handle now.
    package var activeTransfers: Int { active.load(ordering: .relaxed) }
    /// Transfers whose receive side is paused now because their stream's reader is behind.
    package var pausedTransfers: Int { paused.load(ordering: .relaxed) }
    /// Times any transfer's receive side was paused (`CURL_WRITEFUNC_PAUSE`) so far.
    package var receivePauses: Int { pauses.load(ordering: .relaxed) }

    /// Engine thread: the transfer table now holds `count` transfers.
    package func setActive(_ count: Int) { active.store(count, ordering: .relaxed) }

    /// Engine thread: a transfer's receive side paused.
    package func receivePaused() {
        paused.wrappingAdd(1, ordering: .relaxed)
        pauses.wrappingAdd(1, ordering: .relaxed)
    }

    /// Engine thread: a paused receive side resumed or its transfer ended.
    package func receiveResumed() { paused.wrappingSubtract(1, ordering: .relaxed) }
}
