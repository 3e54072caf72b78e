/// Everything a ``QueueActor`` knows about its queues: each queue's state, the configured limits
/// and who waits for a queue to drain.
///
/// Kept behind one lock, so a caller takes a free slot and gives it back without entering the
/// actor. Every method is a transition that returns what the caller must do after the lock is
/// released — the continuations to resume and whether the queue drained — so no continuation is
/// ever resumed while the lock is held.
struct QueueBook {
    typealias Waiter = CheckedContinuation<Void, any Error>
    typealias IdleWaiter = CheckedContinuation<Void, Never>

    /// What a transition leaves to do once the lock is released.
    struct Aftermath {
        /// Waiters that now have a slot: resume them.
        var admitted: [Waiter] = []
        /// Waiters that were dropped (``QueueActor/cancelHeld(_:)``): resume them with `CancellationError`.
        var dropped: [Waiter] = []
        /// The queue has nothing running and nothing waiting: publish `queueDrained`.
        var drained = false
        /// Callers of ``QueueActor/waitUntilIdle(_:)`` to resume because the queue drained.
        var idleWaiters: [IdleWaiter] = []
    }

    /// How a caller enters a queue.
    enum Entry {
        /// A slot was free: run now.
        case start
        /// Wait with this ticket.
        case wait(UInt64)
        /// The queue's limit was set below 1: the caller fails, unsent.
        case refused(limit: Int)
    }

    private var queues: [String: NamedQueueState<Waiter>] = [:]
    private var configuredLimits: [String: Int]
    /// Limits below 1 that were asked for, by queue: refused rather than clamped, until a valid
    /// limit is set. Empty in a sound configuration, so the usual entry looks it up not at all.
    private var refusedLimits: [String: Int]
    /// Callers of ``QueueActor/waitUntilIdle(_:)`` by queue, each with its ticket (to leave when
    /// cancelled).
    private var idleWaiters: [String: [(ticket: UInt64, waiter: IdleWaiter)]] = [:]
    private var lastTicket: UInt64 = 0

    init(limits: [String: Int]) {
        self.configuredLimits = limits.filter { $0.value >= 1 }
        self.refusedLimits = limits.filter { $0.value < 1 }
    }

    /// Takes a slot when one is free and nobody waits (the usual case); otherwise returns the
    /// ticket the caller waits with, or the refused limit.
    mutating func enter(_ queue: String) -> Entry {
        if !refusedLimits.isEmpty, let limit = refusedLimits[queue] { return .refused(limit: limit) }
        if queues[queue, default: NamedQueueState(limit: configuredLimits[queue] ?? 1)].startIfFree() { return .start }
        lastTicket += 1
        return .wait(lastTicket)
    }

    /// Queues a waiter, or returns `true` when a slot freed up in the meantime (the caller then
    /// starts at once and `waiter` is not kept).
    mutating func arrive(_ queue: String, ticket: UInt64, priority: QueuePriority, waiter: Waiter) -> Bool {
        // In place: a copy taken out of the dictionary would copy the waiting lists.
        queues[queue, default: NamedQueueState(limit: configuredLimits[queue] ?? 1)]
            .arrive(id: ticket, priority: priority, waiter: waiter)
    }

    /// Removes a cancelled waiter; `nil` when it is no longer waiting (it was admitted, or dropped).
    mutating func leave(_ queue: String, ticket: UInt64) -> (waiter: Waiter, aftermath: Aftermath)? {
        guard let index = queues.index(forKey: queue), let waiter = queues.values[index].leave(id: ticket) else { return nil }
        return (waiter, drainAftermath(queue, at: index))
    }

    /// Frees a slot: the next waiters in order start.
    mutating func finish(_ queue: String) -> Aftermath {
        // One look-up of the queue's state, changed in place.
        guard let index = queues.index(forKey: queue) else { return Aftermath() }
        return drainAftermath(queue, at: index, admitted: queues.values[index].finish())
    }

    /// Sets a limit of at least 1; a smaller one is recorded as refused and changes nothing else
    /// (what runs goes on, what waits keeps waiting).
    mutating func setLimit(_ limit: Int, for queue: String) -> Aftermath {
        guard limit >= 1 else {
            refusedLimits[queue] = limit
            return Aftermath()
        }
        refusedLimits[queue] = nil
        configuredLimits[queue] = limit
        guard let index = queues.index(forKey: queue) else { return Aftermath() }
        return Aftermath(admitted: queues.values[index].setLimit(limit))
    }

    mutating func hold(_ queue: String) {
        queues[queue, default: NamedQueueState(limit: configuredLimits[queue] ?? 1)].hold()
    }

    /// Opens the gate; `nil` when the queue was never used.
    mutating func resume(_ queue: String) -> Aftermath? {
        guard let index = queues.index(forKey: queue) else { return nil }
        return Aftermath(admitted: queues.values[index].resume())
    }

    /// Drops every waiter and opens the gate; `nil` when the queue was never used.
    mutating func cancelHeld(_ queue: String) -> Aftermath? {
        guard let index = queues.index(forKey: queue) else { return nil }
        let dropped = queues.values[index].removeAllWaiting()
        _ = queues.values[index].resume()
        var aftermath = drainAftermath(queue, at: index)
        aftermath.dropped = dropped
        return aftermath
    }

    /// A ticket for a caller of ``QueueActor/waitUntilIdle(_:)``.
    mutating func idleTicket() -> UInt64 {
        lastTicket += 1
        return lastTicket
    }

    /// Returns `true` when the queue is idle now (or the caller is cancelled); otherwise keeps
    /// `waiter` until it drains or ``leaveIdleWait(_:of:)`` takes it out.
    mutating func isIdleOrWait(_ queue: String, ticket: UInt64, waiter: IdleWaiter) -> Bool {
        if Task.isCancelled || queues[queue]?.isIdle ?? true { return true }
        idleWaiters[queue, default: []].append((ticket, waiter))
        return false
    }

    /// Takes a cancelled caller of ``QueueActor/waitUntilIdle(_:)`` out; `nil` when it no longer
    /// waits (the queue drained first).
    mutating func leaveIdleWait(_ ticket: UInt64, of queue: String) -> IdleWaiter? {
        guard let index = idleWaiters[queue]?.firstIndex(where: { $0.ticket == ticket }) else { return nil }
        let waiter = idleWaiters[queue]?.remove(at: index).waiter
        if idleWaiters[queue]?.isEmpty == true { idleWaiters[queue] = nil }
        return waiter
    }

    func isIdle(_ queue: String) -> Bool {
        queues[queue]?.isIdle ?? true
    }

    func status(of queue: String) -> (running: Int, waiting: Int, isHeld: Bool) {
        guard let state = queues[queue] else { return (0, 0, false) }
        return (state.running, state.waitingCount, state.isHeld)
    }

    /// `admitted` plus, when the queue is idle, the drained flag and the idle waiters it releases.
    private mutating func drainAftermath(
        _ queue: String, at index: Dictionary<String, NamedQueueState<Waiter>>.Index, admitted: [Waiter] = []
    ) -> Aftermath {
        var aftermath = Aftermath(admitted: admitted)
        guard queues.values[index].isIdle else { return aftermath }
        aftermath.drained = true
        // Only when someone waits: the common release touches no second table.
        if !idleWaiters.isEmpty, let waiters = idleWaiters.removeValue(forKey: queue) { aftermath.idleWaiters = waiters.map(\.waiter) }
        return aftermath
    }
}
