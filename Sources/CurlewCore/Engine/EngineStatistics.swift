internal import Synchronization

/// Counters one engine keeps for tests and diagnostics; cheap atomics, written on the engine
/// thread and read anywhere.
package final class EngineStatistics: Sendable {
    private let active = Atomic<Int>(0)
    private let paused = Atomic<Int>(0)
    private let pauses = Atomic<Int>(0)
    private let idle = Atomic<Int>(0)
    private let queued = Atomic<Int>(0)
    private let retries = Atomic<Int>(0)
    private let drained = Atomic<Int>(0)
    private let halfClosed = Atomic<Int>(0)
    private let quietTurns = Atomic<Int>(0)
    /// The sockets the engine's connections hold (open- and close-socket callbacks).
    package let connections = ConnectionLedger()

    /// Creates zeroed counters.
    package init() {}

    /// Transfers attached to the multi handle now.
    package var activeTransfers: Int { active.load(ordering: .relaxed) }
    /// Transfers whose receive side is paused now because their stream's reader is behind.
    package var pausedTransfers: Int { paused.load(ordering: .relaxed) }
    /// Times any transfer's receive side was paused (`CURL_WRITEFUNC_PAUSE`) so far.
    package var receivePauses: Int { pauses.load(ordering: .relaxed) }

    /// Connections (and connection attempts) open now, idle or in use.
    package var openConnections: Int { connections.openSockets }
    /// Connections opened so far.
    package var connectionsOpened: Int { connections.socketsOpened }
    /// Cached connections no transfer uses, as last counted (about once a second).
    package var idleConnections: Int { idle.load(ordering: .relaxed) }
    /// Transfers waiting in Curlew's per-host queue for a connection under the per-host cap.
    package var queuedTransfers: Int { queued.load(ordering: .relaxed) }
    /// Connection attempts retried so far (after a refused, unreachable or reset connection).
    package var connectRetries: Int { retries.load(ordering: .relaxed) }
    /// Transfers ended by a drain deadline so far.
    package var drainedTransfers: Int { drained.load(ordering: .relaxed) }

    /// Idle connections the engine saw closed by their server (their socket turned readable)
    /// and swept out at once.
    package var halfClosedConnectionsSeen: Int { halfClosed.load(ordering: .relaxed) }

    /// Times the engine loop waited with no transfer running (tests: a quiet engine sleeps).
    package var quietWakeups: Int { quietTurns.load(ordering: .relaxed) }

    /// Engine thread: the loop is about to wait with no transfer running.
    package func quietWakeup() { quietTurns.wrappingAdd(1, ordering: .relaxed) }

    /// Engine thread: an idle connection's socket turned readable.
    package func halfClosedSeen() { halfClosed.wrappingAdd(1, ordering: .relaxed) }
    /// Engine thread: idle connections counted.
    package func setIdleConnections(_ count: Int) { idle.store(count, ordering: .relaxed) }
    /// Engine thread: the per-host queues now hold `count` transfers.
    package func setQueued(_ count: Int) { queued.store(count, ordering: .relaxed) }
    /// Engine thread: a connection attempt is retried.
    package func connectRetried() { retries.wrappingAdd(1, ordering: .relaxed) }
    /// Engine thread: a transfer ended by the drain deadline.
    package func transferDrained() { drained.wrappingAdd(1, ordering: .relaxed) }

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
