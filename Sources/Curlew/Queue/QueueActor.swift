/// Named concurrency limits for requests: serial or bounded queues with priorities, a gate that
/// holds work back, and notification when a queue drains.
///
/// A queue is created on first use; it is serial unless configured with a larger limit.
/// Requests without a queue name are not limited.
///
/// ```swift
/// let queues = QueueActor(limits: ["images": 2])
/// let client = APIClient(configuration: config, queues: queues)
/// for url in imageURLs {
///     group.addTask { try await client.send(ImageRequest(url: url), queue: "images") }
/// }
/// await queues.waitUntilIdle("images")       // what has reached the queue is done
///
/// await queues.hold("api")                   // e.g. while logging in
/// // … requests for "api" arrive and wait …
/// await queues.resume("api")                 // they start, in order
/// ```
///
/// Cancelling a waiting caller removes it without using a slot; the slot goes to the next in
/// order. ``setLimit(_:for:)`` takes effect for work not yet started.
public actor QueueActor {
    private typealias Waiter = CheckedContinuation<Void, any Error>

    private var queues: [String: NamedQueueState<Waiter>] = [:]
    private var configuredLimits: [String: Int]
    private var idleWaiters: [String: [CheckedContinuation<Void, Never>]] = [:]
    private var nextID: UInt64 = 0
    private nonisolated let broadcaster = EventBroadcaster()

    /// A new subscription to this actor's queue events (``ClientEvent/Kind/queueDrained``,
    /// ``ClientEvent/Kind/queueHeld``, ``ClientEvent/Kind/queueResumed``, with
    /// ``ClientEvent/queue`` set). Each access returns a new stream; every subscriber sees every
    /// event.
    public nonisolated var events: AsyncStream<ClientEvent> { broadcaster.subscribe() }

    /// Creates the actor.
    /// - Parameter limits: Maximum concurrency per queue name; unnamed queues are serial.
    public init(limits: [String: Int] = [:]) {
        self.configuredLimits = limits
    }

    deinit {
        broadcaster.finish()
    }

    /// Runs `operation` once the named queue grants it a slot, and frees the slot afterwards.
    /// - Parameters:
    ///   - queue: The queue's name.
    ///   - priority: Where it stands among waiters of the same queue.
    ///   - operation: The work; it runs outside the actor.
    /// - Throws: `CancellationError` when the caller is cancelled while waiting or the held queue
    ///   is cancelled with ``cancelHeld(_:)``; otherwise whatever `operation` throws.
    public nonisolated func run<T: Sendable>(
        in queue: String, priority: QueuePriority = .normal, _ operation: @Sendable () async throws -> T
    ) async throws -> T {
        try await acquire(queue, priority: priority)
        do {
            let value = try await operation()
            await release(queue)
            return value
        } catch {
            await release(queue)
            throw error
        }
    }

    /// Waits for a slot in the named queue.
    public func acquire(_ queue: String, priority: QueuePriority = .normal) async throws {
        try Task.checkCancellation()
        // A free slot and nobody waiting (the usual case): start without suspending. A caller
        // that must wait goes through the continuation below, which arrives again with the same
        // state (nothing ran on the actor in between).
        if queues[queue, default: NamedQueueState(limit: configuredLimits[queue] ?? 1)].startIfFree() { return }
        nextID += 1
        let id = nextID
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: Waiter) in
                // In place: a copy taken out of the dictionary would copy the waiting lists.
                let startNow = queues[queue, default: NamedQueueState(limit: configuredLimits[queue] ?? 1)]
                    .arrive(id: id, priority: priority, waiter: continuation)
                if startNow { continuation.resume() }
            }
        } onCancel: {
            Task { await self.abandon(queue, id: id) }
        }
    }

    /// Frees a slot taken with ``acquire(_:priority:)``.
    public func release(_ queue: String) {
        // One look-up of the queue's state, changed in place.
        guard let index = queues.index(forKey: queue) else { return }
        let admitted = queues.values[index].finish()
        let isIdle = queues.values[index].isIdle
        for waiter in admitted { waiter.resume() }
        if isIdle { notifyIdle(queue) }
    }

    /// Changes a queue's limit; work not yet started sees the new limit.
    public func setLimit(_ limit: Int, for queue: String) {
        configuredLimits[queue] = limit
        guard var state = queues[queue] else { return }
        let admitted = state.setLimit(limit)
        queues[queue] = state
        for waiter in admitted { waiter.resume() }
    }

    /// Closes the gate: work keeps arriving and waits (Monkey's `wait(for:tag:)`).
    public func hold(_ queue: String) {
        var state = queues[queue] ?? NamedQueueState(limit: configuredLimits[queue] ?? 1)
        state.hold()
        queues[queue] = state
        publish(.queueHeld, queue)
    }

    /// Opens the gate: waiting work starts in priority, then arrival, order.
    public func resume(_ queue: String) {
        guard var state = queues[queue] else { return }
        let admitted = state.resume()
        queues[queue] = state
        publish(.queueResumed, queue)
        for waiter in admitted { waiter.resume() }
    }

    /// Fails everything waiting in the queue with `CancellationError` and opens the gate
    /// (Monkey's `cancelAllWaitRequest`). Running work is not affected.
    public func cancelHeld(_ queue: String) {
        guard var state = queues[queue] else { return }
        let dropped = state.removeAllWaiting()
        _ = state.resume()
        queues[queue] = state
        for waiter in dropped { waiter.resume(throwing: CancellationError()) }
        notifyIfIdle(queue)
    }

    /// Returns once the named queue has nothing running and nothing waiting.
    ///
    /// It sees only work that has already reached the queue: a call started in a task that has
    /// not run yet is not counted. To wait for a known set of calls, whether or not they have
    /// reached the queue, use a ``RequestTracker``.
    public func waitUntilIdle(_ queue: String) async {
        if queues[queue]?.isIdle ?? true { return }
        await withCheckedContinuation { idleWaiters[queue, default: []].append($0) }
    }

    /// How many operations the queue runs now and how many wait.
    public func status(of queue: String) -> (running: Int, waiting: Int, isHeld: Bool) {
        guard let state = queues[queue] else { return (0, 0, false) }
        return (state.running, state.waitingCount, state.isHeld)
    }

    private func abandon(_ queue: String, id: UInt64) {
        guard var state = queues[queue], let waiter = state.leave(id: id) else { return }
        queues[queue] = state
        waiter.resume(throwing: CancellationError())
        notifyIfIdle(queue)
    }

    private func notifyIfIdle(_ queue: String) {
        guard let state = queues[queue], state.isIdle else { return }
        notifyIdle(queue)
    }

    /// The queue has drained: the event, and whoever waits for it to be idle.
    private func notifyIdle(_ queue: String) {
        publish(.queueDrained, queue)
        guard !idleWaiters.isEmpty, let waiters = idleWaiters.removeValue(forKey: queue) else { return }
        for waiter in waiters { waiter.resume() }
    }

    private nonisolated func publish(_ kind: ClientEvent.Kind, _ queue: String) {
        broadcaster.publish({
            var event = ClientEvent(kind)
            event.queue = queue
            return event
        }())
    }
}
