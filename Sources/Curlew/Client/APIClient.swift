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
/// `APIClient` is an actor so the state later features need (credentials, queues, cache, events)
/// has one owner; its configuration is a `nonisolated let`, and preparing, transferring and
/// decoding run outside the actor's isolation, so concurrent sends never wait for each other.
public actor APIClient {
    /// The configuration this client was created with.
    public nonisolated let configuration: ClientConfiguration
    /// The transport every request goes through.
    public nonisolated let transport: any Transport
    /// The named queues requests with a ``Request/queueName`` wait in.
    public nonisolated let queues: QueueActor
    /// Publishes ``ClientEvent``s (session ended, credential refreshed).
    nonisolated let eventHub = EventBroadcaster()

    /// Events an app observes, e.g. to log the user out when the server ends the session.
    /// One consumer; the newest 64 events are kept while nobody reads.
    public nonisolated var events: AsyncStream<ClientEvent> { eventHub.subscribe() }

    /// The server's current time, from the first ``ServerClock`` in the middleware (the local
    /// time when there is none or no response has been seen).
    public nonisolated func serverTime() -> Date {
        for middleware in configuration.middleware {
            if let clock = middleware as? ServerClock { return clock.now() }
        }
        return Date()
    }

    /// Creates a client.
    /// - Parameters:
    ///   - configuration: Base URL, default headers, transfer options, coders.
    ///   - transport: Defaults to the process-wide ``CurlTransport/shared``.
    ///   - queues: The named queues; share one ``QueueActor`` between clients to share limits.
    public init(configuration: ClientConfiguration, transport: any Transport = CurlTransport.shared, queues: QueueActor = QueueActor()) {
        self.configuration = configuration
        self.transport = transport
        self.queues = queues
    }

    /// Creates a client with a base URL and default configuration otherwise.
    public init(baseURL: String, transport: any Transport = CurlTransport.shared, queues: QueueActor = QueueActor()) {
        self.init(configuration: ClientConfiguration(baseURL: baseURL), transport: transport, queues: queues)
    }

    /// Sends a request and returns its decoded response.
    /// - Throws: ``CurlewError``: `.invalidRequest` before anything is sent, `.transport` when the
    ///   exchange fails, `.httpStatus` when ``Request/accepts(_:)`` refuses the status,
    ///   `.dataFormat` when decoding fails, `.cancelled` when the task is cancelled.
    public nonisolated func send<R: Endpoint>(_ request: R) async throws -> R.Response {
        try await response(for: request).value
    }

    /// Sends a request through a named queue, overriding the request's own queue and priority.
    /// - Parameters:
    ///   - request: The request.
    ///   - queue: The ``QueueActor`` queue to wait in.
    ///   - priority: Its place among the queue's waiters.
    /// - Throws: The same errors as ``send(_:)``; `.cancelled` if cancelled while waiting.
    public nonisolated func send<R: Endpoint>(_ request: R, queue: String, priority: QueuePriority = .normal) async throws -> R.Response {
        try await response(for: request, queue: queue, priority: priority).value
    }

    /// Sends a request and returns the decoded value with status, headers, raw body and source.
    /// - Parameters:
    ///   - request: The request.
    ///   - queue: A queue overriding ``Request/queueName``; `nil` keeps the request's own.
    ///   - priority: A priority overriding ``Request/priority``; `nil` keeps the request's own.
    /// - Throws: The same errors as ``send(_:)``.
    public nonisolated func response<R: Endpoint>(
        for request: R, queue: String? = nil, priority: QueuePriority? = nil
    ) async throws -> APIResponse<R.Response> {
        let prepared = try prepare(request)
        let accessories = request.usesAccessories ? configuration.accessories + request.accessories : []
        return try await AccessoryScope.run(
            Activity(kind: .request, name: String(describing: R.self), request: prepared.summary),
            accessories: accessories
        ) {
            try await queuedExchange(request, prepared, queue: queue ?? request.queueName, priority: priority ?? request.priority)
        }
    }

    /// Waits in the named queue (if any), then runs the exchange.
    private nonisolated func queuedExchange<R: Endpoint>(
        _ request: R, _ prepared: PreparedRequest, queue: String?, priority: QueuePriority
    ) async throws -> APIResponse<R.Response> {
        guard let queueName = queue else { return try await exchange(request, prepared) }
        do {
            return try await queues.run(in: queueName, priority: priority) {
                try await exchange(request, prepared)
            }
        } catch is CancellationError {
            throw CurlewError(
                code: .cancelled, message: "cancelled while waiting in queue \"\(queueName)\"",
                request: prepared.summary, underlying: CancellationError())
        }
    }

    /// Transfer, check the status, decode: one exchange, outside the actor.
    private nonisolated func exchange<R: Endpoint>(_ request: R, _ prepared: PreparedRequest) async throws -> APIResponse<R.Response> {
        let logger = configuration.logger
        guard logger.logLevel <= .debug else { return try await transfer(request, prepared) }
        let started = ContinuousClock.now
        if logger.logLevel <= .trace {
            // Names only: header values (tokens, cookies, signatures) never reach a log.
            logger.trace("\(prepared.summary) headers: \(prepared.headers.map(\.name.canonicalName).joined(separator: ", ")), body: \(prepared.body?.count ?? 0) bytes")
        }
        do {
            let response = try await transfer(request, prepared)
            logger.debug("\(prepared.summary) → \(response.status.code) in \(ContinuousClock.now - started)")
            return response
        } catch let error as CurlewError {
            logger.debug("\(prepared.summary) → \(error.code) in \(ContinuousClock.now - started)")
            throw error
        }
    }

    /// Runs the middleware chain around the innermost step and casts the value back.
    private nonisolated func transfer<R: Endpoint>(_ request: R, _ prepared: PreparedRequest) async throws -> APIResponse<R.Response> {
        let chain = configuration.middleware + request.middleware
        let skipped = request.skippedMiddleware
        let context = MiddlewareContext(
            requestName: String(describing: R.self), requiresAuthentication: request.requiresAuthentication,
            transport: transport, events: eventHub, logger: configuration.logger)
        let innermost: MiddlewareNext = { prepared, context in
            try await self.innermostStep(request, prepared, context)
        }
        var next = innermost
        for middleware in chain.reversed() where !skipped.contains(middleware.kind) {
            let inner = next
            next = { request, context in try await middleware.intercept(request, context: context, next: inner) }
        }
        let response = try await next(prepared, context)
        guard let value = response.value as? R.Response else {
            throw CurlewError(
                code: .decodingFailed, message: "a middleware returned \(type(of: response.value)) where \(R.Response.self) was expected",
                request: prepared.summary, status: response.raw.status)
        }
        return APIResponse(value: value, raw: response.raw)
    }

    /// The innermost step: transport, status check, envelope, hooks and decoding — so every
    /// middleware sees decoded values and every failure as a thrown error.
    private nonisolated func innermostStep<R: Endpoint>(_ request: R, _ prepared: PreparedRequest, _ context: MiddlewareContext) async throws -> MiddlewareResponse {
        let raw: RawResponse
        do {
            raw = try await context.transport.send(prepared)
        } catch {
            throw CurlewError.wrapping(error, request: prepared.summary)
        }
        guard request.accepts(raw.status) else {
            var error = CurlewError(code: .unacceptableStatus, message: "unacceptable status \(raw.status.code)")
                .completed(request: prepared.summary, response: raw)
            error.responseBody = raw.body
            throw error
        }
        guard let envelope = context.envelope else {
            return MiddlewareResponse(raw: raw, value: try decode(request, raw, summary: prepared.summary))
        }
        let payload = try EnvelopeReader(envelope: envelope).payload(of: raw, summary: prepared.summary)
        do {
            return MiddlewareResponse(raw: raw, value: try decode(request, payload, summary: prepared.summary))
        } catch var error as CurlewError where error.level == .dataFormat {
            EnvelopeReader.prefix(&error, with: envelope.payloadPath, raw: raw)
            throw error
        }
    }

    private nonisolated func decode<R: Endpoint>(_ request: R, _ raw: RawResponse, summary: RequestSummary) throws -> R.Response {
        do {
            try request.didReceive(raw)
        } catch let error as CurlewError {
            throw error.completed(request: summary, response: raw)
        } catch {
            throw CurlewError(code: .serverError, message: "\(error)", underlying: error).completed(request: summary, response: raw)
        }
        do {
            return try request.decode(raw, decoder: configuration.decoder)
        } catch let error as CurlewError {
            throw error.completed(request: summary, response: raw)
        } catch let error as DecodingError {
            let explained = DecodingFailure(error, body: raw.body)
            throw CurlewError(code: explained.code, message: explained.message, dataPath: explained.path, underlying: error)
                .completed(request: summary, response: raw)
        } catch {
            throw CurlewError(code: .decodingFailed, message: "\(error)", underlying: error).completed(request: summary, response: raw)
        }
    }
}
