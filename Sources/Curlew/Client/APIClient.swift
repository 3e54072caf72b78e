public import Foundation

/// Sends ``Endpoint`` values and returns their typed responses.
///
/// ```swift
/// let client = APIClient(baseURL: "https://gallery.example.com/api")
/// let results = try await client.send(SearchRequest(key: "sunset"))
/// let full = try await client.response(for: SearchRequest(key: "sunset"))
/// print(full.status, full.headers[.contentType] ?? "", full.body.count)
/// ```
///
/// Per-call policy goes in ``RequestOptions``: the endpoint type declares its defaults, the call
/// site adjusts them (`client.send(request) { $0.queue = "downloads" }`).
///
/// Everything that leaves ``send(_:)``, ``response(for:options:)``, ``stream(_:highWaterMark:options:)``, a batch
/// member or a chain is a ``/CurlewCore/CurlewError`` naming its ``/CurlewCore/CurlewError/stage`` and the request —
/// except cancellation, which always surfaces as Swift's `CancellationError`, wherever it
/// happened (in a queue, in a retry back-off, in a token refresh, in the transfer), so
/// `catch is CancellationError` works as structured concurrency expects.
///
/// `APIClient` is an actor so the state later features need (credentials, queues, cache, events)
/// has one owner; its configuration is a `nonisolated let`, and preparing, transferring and
/// decoding run outside the actor's isolation, so concurrent sends never wait for each other.
public actor APIClient {
    /// The configuration this client was created with.
    public nonisolated let configuration: ClientConfiguration
    /// The transport every request goes through.
    public nonisolated let transport: any Transport
    /// The named queues calls with a ``RequestOptions/queue`` wait in.
    public nonisolated let queues: QueueActor
    /// Publishes every call's ``ClientEvent``s.
    nonisolated let eventHub = EventBroadcaster()
    /// The client's middleware with built-ins in phase order (``MiddlewarePhase``).
    nonisolated let middleware: [any APIMiddleware]
    /// ``middleware`` composed around the transport once, for every call that neither adds nor
    /// skips middleware (``MiddlewareChain``).
    nonisolated let composedMiddleware: MiddlewareNext
    /// The origins that receive credentials, signatures and common arguments.
    nonisolated let trustedOrigins: TrustedOrigins
    /// The transport, trusted origins and logger every call's ``MiddlewareContext`` starts from,
    /// in one box all calls share.
    nonisolated let environment: CopyOnWriteBox<CallEnvironment>
    /// Whether a middleware that provides credentials is configured (``AuthorizationMiddleware``).
    nonisolated let hasCredentialSource: Bool
    /// The kinds of the configured middleware that declare a response cache
    /// (``MiddlewareCapabilities/responseCache``): a call has a cache unless it skips all of them.
    nonisolated let responseCacheKinds: Set<MiddlewareKind>

    /// A new subscription to every event of every call of this client: started, queued, attempt,
    /// redirected, retry scheduled, credential refreshed, session ended, head received, progress,
    /// finished, failed. Each access returns a new stream that receives every event from then on
    /// (the newest 1024 are kept while it is not read); subscribers never split events. The
    /// streams end when the client is released.
    public nonisolated var events: AsyncStream<ClientEvent> { eventHub.subscribe() }

    deinit {
        eventHub.finish()
    }

    /// The server's current time, from the first middleware that keeps it (``ServerClock``; the
    /// local time when there is none or no response has been seen).
    public nonisolated func serverTime() -> Date {
        for middleware in configuration.middleware {
            if let now = middleware.capabilities.serverTime { return now() }
        }
        return Date()
    }

    /// Creates a client.
    /// - Parameters:
    ///   - configuration: Base URL, default headers, transfer options, coders, middleware.
    ///   - transport: Defaults to the process-wide ``CurlTransport/shared``.
    ///   - queues: The named queues; share one ``QueueActor`` between clients to share limits.
    public init(configuration: ClientConfiguration, transport: any Transport = CurlTransport.shared, queues: QueueActor = QueueActor()) {
        self.configuration = configuration
        self.transport = transport
        self.queues = queues
        self.middleware = MiddlewareArrangement.arrange(configuration.middleware)
        self.composedMiddleware = MiddlewareChain.compose(middleware)
        var origins = configuration.trustedOrigins
        if let baseURL = configuration.baseURL { origins.insert(baseURL) }
        let capabilities = configuration.middleware.map(\.capabilities)
        for declared in capabilities { origins.formUnion(declared.trustedOrigins) }
        self.trustedOrigins = TrustedOrigins(origins)
        self.environment = CopyOnWriteBox(
            CallEnvironment(
                transport: transport, trustedOrigins: trustedOrigins, logger: configuration.logger, deadlineHeader: configuration.deadlineHeader,
                middleware: middleware))
        self.hasCredentialSource = capabilities.contains { $0.providesCredentials }
        self.responseCacheKinds = Set(zip(configuration.middleware, capabilities).compactMap { $1.responseCache != nil ? $0.kind : nil })
        // Expired files of the process-wide download area go even when no download starts again
        // and no one runs the area as a service.
        DownloadArea.shared.sweepInBackground()
    }

    /// Creates a client with a base URL and default configuration otherwise.
    public init(baseURL: String, transport: any Transport = CurlTransport.shared, queues: QueueActor = QueueActor()) {
        self.init(configuration: ClientConfiguration(baseURL: baseURL), transport: transport, queues: queues)
    }

    /// Sends a request and returns its decoded response.
    /// - Throws: ``/CurlewCore/CurlewError``: `.invalidRequest` level before anything is sent, `.transport`
    ///   when the exchange fails, `.httpStatus` when ``Endpoint/accepts(_:)`` refuses the status,
    ///   `.server` for a business error in the envelope, `.dataFormat` when decoding fails;
    ///   `CancellationError` when the task is cancelled.
    public nonisolated func send<R: Endpoint>(_ request: R) async throws -> R.Response {
        try await call(request, options: request.options).value
    }

    /// Sends a request with its options adjusted for this call.
    ///
    /// ```swift
    /// let page = try await client.send(FeedRequest(page: 2)) { options in
    ///     options.queue = "feed"
    ///     options.priority = .high
    ///     options.totalTimeout = .seconds(5)
    /// }
    /// ```
    /// - Parameters:
    ///   - request: The request.
    ///   - adjust: Changes a copy of ``Endpoint/options`` for this call only.
    /// - Throws: The same errors as ``send(_:)``.
    public nonisolated func send<R: Endpoint>(_ request: R, options adjust: (inout RequestOptions) -> Void) async throws -> R.Response {
        var options = request.options
        adjust(&options)
        return try await call(request, options: options).value
    }

    /// Sends a request through a named queue, overriding its own queue and priority.
    /// - Throws: The same errors as ``send(_:)``; `CancellationError` if cancelled while waiting.
    public nonisolated func send<R: Endpoint>(_ request: R, queue: String, priority: QueuePriority = .normal) async throws -> R.Response {
        try await response(for: request, queue: queue, priority: priority).value
    }

    /// Sends a request and returns the decoded value with status, headers, raw body, source,
    /// business code and message, and transfer metrics.
    /// - Parameters:
    ///   - request: The request.
    ///   - adjust: Changes a copy of ``Endpoint/options`` for this call only.
    /// - Throws: The same errors as ``send(_:)``.
    public nonisolated func response<R: Endpoint>(
        for request: R, options adjust: ((inout RequestOptions) -> Void)? = nil
    ) async throws -> APIResponse<R.Response> {
        var options = request.options
        adjust?(&options)
        return try await call(request, options: options)
    }

    /// Sends a request through a named queue and returns the full response.
    public nonisolated func response<R: Endpoint>(
        for request: R, queue: String, priority: QueuePriority = .normal
    ) async throws -> APIResponse<R.Response> {
        var options = request.options
        options.queue = queue
        options.priority = priority
        return try await call(request, options: options)
    }

    /// Sends a request and returns as soon as the response head arrives, with the body as the
    /// response's value: a ``/CurlewCore/ResponseBodyStream`` read with back-pressure (constant memory for any
    /// size).
    ///
    /// The whole middleware chain runs and the status is checked (``Endpoint/accepts(_:)``); the
    /// envelope and decoding are not applied — the bytes are yours. In a named queue
    /// (``RequestOptions/queue``) the call keeps its slot until the body has arrived, failed, or
    /// been stopped (a cancelled read, the stream dropped); an unread body beyond `highWaterMark`
    /// has not arrived, so read or drop it before sending another call through the same serial
    /// queue. A ``RequestTracker`` ticket (``RequestOptions/ticket``) is handed back then too.
    ///
    /// ```swift
    /// let response = try await client.stream(ExportRequest())
    /// for try await chunk in response.value { try file.write(contentsOf: chunk) }
    /// ```
    /// - Parameters:
    ///   - request: The request.
    ///   - highWaterMark: Unread bytes above which the transfer pauses. Default: 1 MiB. At least
    ///     16 KiB, the most libcurl hands over at once: a smaller value counts as 16 KiB.
    ///   - adjust: Changes a copy of ``Endpoint/options`` for this call only.
    /// - Throws: The same errors as ``send(_:)`` up to the head; errors after it come out of the
    ///   body stream.
    public nonisolated func stream<R: Endpoint>(
        _ request: R, highWaterMark: Int = 1 << 20, options adjust: ((inout RequestOptions) -> Void)? = nil
    ) async throws -> APIResponse<ResponseBodyStream> {
        var options = request.options
        adjust?(&options)
        // The call is running until its body has arrived: the ticket goes back when the body
        // ends (or at once, when the call fails or answers without a stream).
        let ticket = options.ticket
        options.ticket = nil
        do {
            return try await call(request, options: options, responseBody: .stream(highWaterMark: highWaterMark)) { raw, _ in
                if let ticket {
                    if case .stream(let body) = raw.content { body.whenEnded { _ in ticket.finish() } } else { ticket.finish() }
                }
                return APIResponse(value: ResponseBodyStream(body: raw.content), raw: raw)
            }
        } catch {
            ticket?.finish()
            throw error
        }
    }
}
