/// A client-wide scheduler: every call that is not in a named queue waits for one of
/// `maximumConcurrent` slots, higher ``RequestOptions/priority`` first, FIFO within a priority —
/// so priority matters outside named queues too (Monkey's `MKRequestPriority`). Calls in a named
/// queue (``RequestOptions/queue``) are scheduled by their queue and pass.
///
/// ```swift
/// let scheduler = ClientScheduler(maximumConcurrent: 4)
/// let client = APIClient(configuration: ClientConfiguration(baseURL: url, middleware: [scheduler]))
/// let urgent = try await client.send(Search(key: "fog")) { $0.priority = .high }
/// ```
///
/// Give several clients the same value to schedule them together. It places itself first (phase
/// ``MiddlewarePhase/scheduling``), so a waiting call holds no other resource.
public struct ClientScheduler: APIMiddleware {
    /// The queue actor that keeps the slots.
    public let queues: QueueActor
    /// The name of the queue inside ``queues``.
    public let queueName: String
    /// How many unqueued calls run at once.
    public let maximumConcurrent: Int

    /// Creates a scheduler with its own slots.
    public init(maximumConcurrent: Int, queueName: String = "curlew.client") {
        self.maximumConcurrent = max(1, maximumConcurrent)
        self.queueName = queueName
        self.queues = QueueActor(limits: [queueName: max(1, maximumConcurrent)])
    }

    /// `ClientScheduler`.
    public var kind: MiddlewareKind { MiddlewareKind("ClientScheduler") }

    /// ``MiddlewarePhase/scheduling``.
    public var phase: MiddlewarePhase? { .scheduling }

    /// Waits for a slot by priority (unless the call has a named queue), then sends; a call whose
    /// deadline (``withDeadline(in:isolation:operation:)``) passes while it waits fails with
    /// `.deadlineExceeded` and is not sent.
    public nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        guard context.options.queue == nil else { return try await next(request, context) }
        return try await queues.runHere(in: queueName, priority: context.options.priority, deadline: context.deadline, request: request.summary) {
            try await next(request, context)
        }
    }
}
