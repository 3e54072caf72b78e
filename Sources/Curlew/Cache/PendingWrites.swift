internal import Logging
internal import Synchronization

/// The writes and removals a ``ResponseCache`` has accepted but its storage has not finished,
/// off the callers' path: one drain task applies them in order while lookups see them at once
/// (read-your-writes). A removal is visible as "absent" the same way. A storage whose writes are
/// as cheap as queueing them (``InlineWritableCacheStorage``, memory) is written on the caller's
/// path instead: nothing is ever pending, and no drain task is started per write.
///
/// `Sendable` through one `Mutex` guarding ``State``; the storage and the failure handler are
/// immutable and `Sendable`.
final class PendingWrites: Sendable {
    /// What a key will hold once its pending operation is applied.
    enum Operation: Sendable {
        case store(CacheEntry)
        case remove
    }

    private struct Job: Sendable {
        var key: String
        var generation: UInt64
        var operation: Operation
        var logger: Logger
        var summary: RequestSummary
    }

    private struct State: Sendable {
        /// The latest accepted operation per key, with its generation.
        var latest: [String: (generation: UInt64, operation: Operation)] = [:]
        var queue: [Job] = []
        var head = 0
        var draining = false
        var generation: UInt64 = 0
        var idleWaiters: [CheckedContinuation<Void, Never>] = []
    }

    /// Accepted jobs beyond which a new one makes its caller wait for the queue to drain, so a
    /// slow disk cannot make pending bodies pile up in memory without bound.
    static let backlogLimit = 256

    private let state = Mutex(State())
    private let storage: any CacheStorage
    /// Whether writes go to the storage on the caller's path (decided once, from the storage).
    private let writesInline: Bool
    private let failed: @Sendable () -> Void

    /// Pending writes into `storage`; `failed` is called for each write the storage refused.
    init(storage: any CacheStorage, failed: @escaping @Sendable () -> Void) {
        self.storage = storage
        self.writesInline = storage is any InlineWritableCacheStorage
        self.failed = failed
    }

    /// The pending operation for `key`, `nil` when the storage alone knows.
    func operation(for key: String) -> Operation? {
        state.withLock { $0.latest[key]?.operation }
    }

    /// Accepts an operation: visible to ``operation(for:)`` at once, applied by the drain task.
    /// Waits only when the backlog is full.
    func submit(_ operation: Operation, key: String, logger: Logger, summary: RequestSummary) async {
        if writesInline {
            await apply(operation, key: key, logger: logger, summary: summary)
            return
        }
        let (startDrain, backlog) = state.withLock { state -> (Bool, Int) in
            state.generation += 1
            state.latest[key] = (state.generation, operation)
            state.queue.append(Job(key: key, generation: state.generation, operation: operation, logger: logger, summary: summary))
            let start = !state.draining
            state.draining = true
            return (start, state.queue.count - state.head)
        }
        if startDrain {
            Task { await self.drain() }
        }
        if backlog > Self.backlogLimit { await waitUntilIdle() }
    }

    /// Writes or removes in the storage; a refused write is logged and counted, never thrown.
    private func apply(_ operation: Operation, key: String, logger: Logger, summary: RequestSummary) async {
        switch operation {
        case .store(let entry):
            do {
                try await storage.store(entry)
            } catch {
                logger.debug("cache: writing \(summary) failed: \(error)")
                failed()
            }
        case .remove:
            await storage.removeEntry(for: key)
        }
    }

    /// Returns when every operation accepted so far (and any accepted meanwhile) is applied.
    func waitUntilIdle() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let idle = state.withLock { state -> Bool in
                guard state.draining else { return true }
                state.idleWaiters.append(continuation)
                return false
            }
            if idle { continuation.resume() }
        }
    }

    /// Applies jobs in order until the queue is empty. A job superseded by a later one for the
    /// same key is skipped: the later one decides what the key holds.
    private func drain() async {
        while true {
            let next = state.withLock { state -> (job: Job?, superseded: Bool, waiters: [CheckedContinuation<Void, Never>]) in
                guard state.head < state.queue.count else {
                    state.queue.removeAll(keepingCapacity: true)
                    state.head = 0
                    state.draining = false
                    let waiters = state.idleWaiters
                    state.idleWaiters = []
                    return (nil, false, waiters)
                }
                let job = state.queue[state.head]
                state.head += 1
                return (job, state.latest[job.key]?.generation != job.generation, [])
            }
            guard let job = next.job else {
                next.waiters.forEach { $0.resume() }
                return
            }
            guard !next.superseded else { continue }
            await apply(job.operation, key: job.key, logger: job.logger, summary: job.summary)
            state.withLock { state in
                if state.latest[job.key]?.generation == job.generation { state.latest[job.key] = nil }
            }
        }
    }
}
