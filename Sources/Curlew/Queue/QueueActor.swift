internal import Synchronization

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
///
/// The queues' state sits behind a lock rather than in the actor's isolation: ``run(in:priority:_:)``
/// takes a free slot and gives it back without an executor hop, and only a caller that must wait
/// suspends. The methods stay actor methods, so every `await queues.…` keeps compiling as it is.
public actor QueueActor {
    /// The queues, their limits and the drain waiters; every access takes the lock once.
    private nonisolated let book: Mutex<QueueBook>
    private nonisolated let broadcaster = EventBroadcaster()

    /// A new subscription to this actor's queue events (``ClientEvent/Kind/queueDrained``,
    /// ``ClientEvent/Kind/queueHeld``, ``ClientEvent/Kind/queueResumed``, with
    /// ``ClientEvent/queue`` set). Each access returns a new stream; every subscriber sees every
    /// event.
    public nonisolated var events: AsyncStream<ClientEvent> { broadcaster.subscribe() }

    /// Creates the actor.
    /// - Parameter limits: Maximum concurrency per queue name, at least 1; queues not named here
    ///   are serial. A queue given a limit below 1 is refused, not clamped: each call to it fails
    ///   unsent with `.invalidConnectionSettings` until ``setLimit(_:for:)`` gives it a valid one.
    public init(limits: [String: Int] = [:]) {
        self.book = Mutex(QueueBook(limits: limits))
    }

    deinit {
        broadcaster.finish()
    }

    /// Runs `operation` once the named queue grants it a slot, and frees the slot afterwards.
    /// - Parameters:
    ///   - queue: The queue's name.
    ///   - priority: Where it stands among waiters of the same queue.
    ///   - operation: The work; it runs outside the actor.
    ///
    /// Under a deadline (``withDeadline(in:isolation:operation:)``) a caller still waiting for its
    /// slot when the deadline passes leaves the line with `.deadlineExceeded`, never having held
    /// a slot, as Curlew's own calls do.
    /// - Throws: `CancellationError` when the caller is cancelled while waiting or the held queue
    ///   is cancelled with ``cancelHeld(_:)``; ``/CurlewCore/CurlewError`` `.deadlineExceeded` when its
    ///   deadline passes while it waits; otherwise whatever `operation` throws.
    public nonisolated func run<T: Sendable>(
        in queue: String, priority: QueuePriority = .normal, _ operation: @Sendable () async throws -> T
    ) async throws -> T {
        try await runHere(in: queue, priority: priority, deadline: CallDeadline.current) { try await operation() }
    }

    /// ``run(in:priority:_:)`` for Curlew's own calls: `operation` runs on the caller's executor
    /// (the engine's, for a request task that prefers it), so a queued call changes executor
    /// no more often than an unqueued one.
    ///
    /// A caller still waiting when `deadline` passes leaves the line with `.deadlineExceeded`
    /// (about `request`) without ever holding a slot.
    nonisolated(nonsending) func runHere<T: Sendable>(
        in queue: String, priority: QueuePriority, deadline: ContinuousClock.Instant? = nil, request: RequestSummary? = nil,
        _ operation: nonisolated(nonsending) () async throws -> T
    ) async throws -> T {
        try await enter(queue, priority: priority, deadline: deadline, request: request)
        defer { leave(queue) }
        return try await operation()
    }

    /// Waits for a slot like ``runHere(in:priority:deadline:request:_:)`` and returns it held,
    /// for a call whose work goes on after it returns (a streamed body).
    nonisolated(nonsending) func heldSlot(
        in queue: String, priority: QueuePriority, deadline: ContinuousClock.Instant?, request: RequestSummary
    ) async throws -> QueueSlot {
        try await enter(queue, priority: priority, deadline: deadline, request: request)
        return QueueSlot(queue, of: self)
    }

    /// Waits for a slot in the named queue; under a deadline, until the deadline at the latest
    /// (then `.deadlineExceeded`, no slot taken).
    public func acquire(_ queue: String, priority: QueuePriority = .normal) async throws {
        try await enter(queue, priority: priority, deadline: CallDeadline.current)
    }

    /// Frees a slot taken with ``acquire(_:priority:)``.
    public func release(_ queue: String) {
        leave(queue)
    }

    /// Changes a queue's limit; work not yet started sees the new limit. A limit below 1 is
    /// refused: what runs goes on and what waits keeps waiting, but each call that reaches the
    /// queue afterwards fails unsent with `.invalidConnectionSettings`, naming the queue and the
    /// limit, until a valid limit is set.
    public func setLimit(_ limit: Int, for queue: String) {
        carryOut(book.withLock { $0.setLimit(limit, for: queue) }, queue)
    }

    /// Closes the gate: work keeps arriving and waits.
    public func hold(_ queue: String) {
        book.withLock { $0.hold(queue) }
        publish(.queueHeld, queue)
    }

    /// ``hold(_:)`` from synchronous code: the owner of a queue's gate closes it where it cannot
    /// await, before any call can reach the queue (a fleet limiter, from its initializer).
    package nonisolated func holdFromOwner(_ queue: String) {
        book.withLock { $0.hold(queue) }
        publish(.queueHeld, queue)
    }

    /// Opens the gate: waiting work starts in priority, then arrival, order.
    public func resume(_ queue: String) {
        let (wasHeld, aftermath) = book.withLock { book in (book.status(of: queue).isHeld, book.resume(queue)) }
        guard let aftermath else { return }
        // A gate that was open is not resumed: nothing to tell.
        if wasHeld { publish(.queueResumed, queue) }
        carryOut(aftermath, queue)
    }

    /// Fails everything waiting in the queue with `CancellationError` and opens the gate.
    /// Running work is not affected.
    public func cancelHeld(_ queue: String) {
        let (wasHeld, aftermath) = book.withLock { book in (book.status(of: queue).isHeld, book.cancelHeld(queue)) }
        guard let aftermath else { return }
        if wasHeld { publish(.queueResumed, queue) }
        carryOut(aftermath, queue)
    }

    /// Returns once the named queue has nothing running and nothing waiting, or at once when
    /// the calling task is cancelled.
    ///
    /// It sees only work that has already reached the queue: a call started in a task that has
    /// not run yet is not counted. To wait for a known set of calls, whether or not they have
    /// reached the queue, use a ``RequestTracker``.
    public func waitUntilIdle(_ queue: String) async {
        if book.withLock({ $0.isIdle(queue) }) { return }
        let ticket = book.withLock { $0.idleTicket() }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (waiter: QueueBook.IdleWaiter) in
                // Asked again under the lock: the queue may have drained, or the task been
                // cancelled, since.
                if book.withLock({ $0.isIdleOrWait(queue, ticket: ticket, waiter: waiter) }) { waiter.resume() }
            }
        } onCancel: {
            book.withLock { $0.leaveIdleWait(ticket, of: queue) }?.resume()
        }
    }

    /// How many operations the queue runs now and how many wait.
    public func status(of queue: String) -> (running: Int, waiting: Int, isHeld: Bool) {
        book.withLock { $0.status(of: queue) }
    }

    /// Takes a slot: at once when one is free and nobody waits, otherwise in order.
    ///
    /// A waiter cancelled before it is queued is never queued: the cancellation flag is set
    /// before the handler runs, and the check below and the handler's removal both happen under
    /// the lock.
    ///
    /// With a `deadline`, an alarm set once the waiter is in line removes it when the deadline
    /// passes — under the lock, as cancellation does — and fails it with `.deadlineExceeded`.
    private nonisolated(nonsending) func enter(
        _ queue: String, priority: QueuePriority, deadline: ContinuousClock.Instant? = nil, request: RequestSummary? = nil
    ) async throws {
        try Task.checkCancellation()
        let ticket: UInt64
        switch book.withLock({ $0.enter(queue) }) {
        case .start: return
        case .wait(let waiting): ticket = waiting
        case .refused(let limit): throw Self.refusal(queue, limit: limit, request: request)
        }
        var alarm: Task<Void, Never>?
        defer { alarm?.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (waiter: QueueBook.Waiter) in
                let startsNow: Bool? = book.withLock { state in
                    Task.isCancelled ? nil : state.arrive(queue, ticket: ticket, priority: priority, waiter: waiter)
                }
                switch startsNow {
                case nil: waiter.resume(throwing: CancellationError())
                case true?: waiter.resume()
                case false?:
                    guard let deadline else { break }
                    alarm = CallDeadline.alarm(at: deadline) { self.expire(queue, ticket: ticket, request: request) }
                }
            }
        } onCancel: {
            guard let (waiter, aftermath) = book.withLock({ $0.leave(queue, ticket: ticket) }) else { return }
            waiter.resume(throwing: CancellationError())
            carryOut(aftermath, queue)
        }
    }

    /// The error of a call to a queue whose limit was set below 1.
    private static func refusal(_ queue: String, limit: Int, request: RequestSummary?) -> CurlewError {
        var error = CurlewError(
            code: .invalidConnectionSettings,
            message: "the queue \"\(queue)\" has the limit \(limit); a limit must be at least 1 (1 runs one call at a time), so nothing was sent",
            request: request)
        error.stage = .queue
        return error
    }

    /// Takes a waiter whose deadline passed out of line (if it still waits) and fails it.
    private nonisolated func expire(_ queue: String, ticket: UInt64, request: RequestSummary?) {
        guard let (waiter, aftermath) = book.withLock({ $0.leave(queue, ticket: ticket) }) else { return }
        waiter.resume(throwing: CallDeadline.exceededWhileWaiting(for: "a slot in the queue \"\(queue)\"", request: request))
        carryOut(aftermath, queue)
    }

    /// Gives a slot back (taken by ``runHere(in:priority:deadline:request:_:)``'s entry, or held by
    /// a ``QueueSlot``).
    nonisolated func leave(_ queue: String) {
        carryOut(book.withLock { $0.finish(queue) }, queue)
    }

    /// Resumes what a transition released, outside the lock.
    private nonisolated func carryOut(_ aftermath: QueueBook.Aftermath, _ queue: String) {
        for waiter in aftermath.dropped { waiter.resume(throwing: CancellationError()) }
        for waiter in aftermath.admitted { waiter.resume() }
        guard aftermath.drained else { return }
        publish(.queueDrained, queue)
        for waiter in aftermath.idleWaiters { waiter.resume() }
    }

    private nonisolated func publish(_ kind: ClientEvent.Kind, _ queue: String) {
        broadcaster.publish(
            {
                var event = ClientEvent(kind)
                event.queue = queue
                return event
            }())
    }
}
