/// One named queue's bookkeeping, as a value: its limit, what runs, who waits, whether it is held.
///
/// Every method is a pure transition returning the waiters to resume, so ``QueueActor`` stays a
/// thin shell and the rules are testable without tasks.
struct NamedQueueState<Waiter> {
    /// Most operations allowed to run at once (at least 1).
    var limit: Int
    /// Operations running now.
    private(set) var running = 0
    /// Whether the gate is closed.
    private(set) var isHeld = false
    /// Waiters by priority, each first-in first-out; index = `QueuePriority.rawValue`.
    private var waiting: [[(id: UInt64, waiter: Waiter)]] = Array(repeating: [], count: QueuePriority.allCases.count)

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Nothing running, nothing waiting.
    var isIdle: Bool { running == 0 && waitingCount == 0 }

    /// How many callers wait for a slot.
    var waitingCount: Int { waiting.reduce(0) { $0 + $1.count } }

    /// Takes a slot at once when the gate is open, a slot is free and nobody waits ahead;
    /// otherwise records the waiter. Returns whether the caller may start now.
    mutating func arrive(id: UInt64, priority: QueuePriority, waiter: Waiter) -> Bool {
        if startIfFree() { return true }
        waiting[priority.rawValue].append((id, waiter))
        return false
    }

    /// Starts a caller when the queue is not held, has a free slot and nobody waits (no one is
    /// overtaken); `false` changes nothing.
    mutating func startIfFree() -> Bool {
        guard !isHeld, running < limit, waitingCount == 0 else { return false }
        running += 1
        return true
    }

    /// Removes a waiter that gave up; it never held a slot. Returns it if it was still waiting.
    mutating func leave(id: UInt64) -> Waiter? {
        for level in waiting.indices {
            if let index = waiting[level].firstIndex(where: { $0.id == id }) {
                return waiting[level].remove(at: index).waiter
            }
        }
        return nil
    }

    /// A running operation finished; returns the waiters that may start now.
    mutating func finish() -> [Waiter] {
        running = max(0, running - 1)
        return admit()
    }

    mutating func hold() { isHeld = true }

    /// Opens the gate; returns the waiters that may start now, in order.
    mutating func resume() -> [Waiter] {
        isHeld = false
        return admit()
    }

    /// Changes the limit for operations not yet started; returns waiters a larger limit admits.
    mutating func setLimit(_ newLimit: Int) -> [Waiter] {
        limit = max(1, newLimit)
        return admit()
    }

    /// Removes every waiter (for cancel-held); running operations are unaffected.
    mutating func removeAllWaiting() -> [Waiter] {
        defer { waiting = Array(repeating: [], count: QueuePriority.allCases.count) }
        return waiting.reversed().flatMap { $0.map(\.waiter) }
    }

    private mutating func admit() -> [Waiter] {
        var admitted: [Waiter] = []
        while !isHeld, running < limit, let level = waiting.lastIndex(where: { !$0.isEmpty }) {
            admitted.append(waiting[level].removeFirst().waiter)
            running += 1
        }
        return admitted
    }
}
