internal import Foundation
internal import HTTPTypes

extension APIClient {
    /// One call, start to finish: prepare, check the configuration, report, wait in the queue,
    /// run the middleware chain around the transport, then decode once.
    ///
    /// The internal steps of a call are `nonisolated(nonsending)`: they run on the executor of the
    /// public entry point (`send`, `response(for:)`…), which, as an ordinary `nonisolated async`
    /// function, has already left the caller's actor. So a call changes executor once, not at
    /// every step; each hop would take the task's status lock to look up its executor
    /// preference. This step and ``exchange`` are inlined into their callers: an async function
    /// is a frame of its own (a task allocation, its context and the copies into it).
    @inline(__always)
    nonisolated(nonsending) func call<R: Endpoint>(_ request: R, options: RequestOptions) async throws -> APIResponse<R.Response> {
        try await call(request, options: options, responseBody: .collect) { raw, summary in
            try ResponseDecoding.decode(raw, of: request, summary: summary, decoder: self.configuration.decoder)
        }
    }

    /// The general form: `finish` turns the chain's raw response into the caller's value.
    /// `prepared` is the request already prepared by the caller (a download prepares once to
    /// plan its files); `nil` prepares it here.
    nonisolated(nonsending) func call<R: Endpoint, Output: Sendable>(
        _ request: R, prepared given: PreparedRequest? = nil, options: RequestOptions, responseBody: ResponseBodyDisposition,
        finish: @Sendable (RawResponse, RequestSummary) throws -> Output
    ) async throws -> Output {
        var options = options
        if options.queue == nil, let queue = configuration.defaultQueue { options.queue = queue }
        let facts = EndpointTypeFacts.of(request)
        let name = options.requestName ?? facts.name
        let reporter = EventReporter(broadcaster: eventHub, requestID: .next(), requestName: name)
        defer { options.ticket?.finish() }
        var summary: RequestSummary?
        do {
            try Task.checkCancellation()
            try facts.check()
            var prepared = try given ?? prepare(request, baseURL: options.baseURL)
            summary = prepared.summary
            if let deadline = CallDeadline.current { try CallDeadline.check(deadline, now: .now, request: prepared.summary) }
            try checkConfiguration(options, request: prepared, name: name)
            options.applyTimeoutOverrides(to: &prepared.options)
            if let limit = options.maximumBodySize { prepared.options.maximumBodySize = limit }
            options.applyConnectionOverrides(to: &prepared.options)
            reporter.report(.started) { $0.request = prepared.summary }
            let accessories = options.usesAccessories ? configuration.accessories + options.accessories : []
            let ready = prepared
            if accessories.isEmpty, options.queue == nil {
                // The common case, without the closures a queue or accessories need.
                return try await exchange(request, ready, options: options, responseBody: responseBody, reporter: reporter, finish: finish)
            }
            let activity = Activity(kind: .request, name: name, request: ready.summary)
            // Accessories draw the progress of a download or upload.
            let drawn = AccessoryProgress.options(options, drawingTo: accessories, activity: activity, request: ready, responseBody: responseBody)
            let output = try await AccessoryScope.run(activity, accessories: accessories) {
                try await queued(drawn, reporter: reporter, request: ready.summary, responseBody: responseBody) { slot in
                    try await exchange(request, ready, options: drawn, responseBody: responseBody, reporter: reporter) { raw, summary in
                        slot?.keep(for: raw)
                        return try finish(raw, summary)
                    }
                }
            }
            return output
        } catch {
            let surfaced = Self.surface(error, request: summary)
            // A download's exchange that it will start over is not the end of the call.
            if options.mayStartOver, (surfaced as? CurlewError)?.startsDownloadOver == true { throw surfaced }
            if let failure = surfaced as? CurlewError { request.didFail(failure) }
            reporter.report(.failed) { event in
                event.request = summary
                event.error = surfaced as? CurlewError
                event.status = (surfaced as? CurlewError)?.status
            }
            throw surfaced
        }
    }

    /// Fails a call that requires login on a client that has no credential source.
    private nonisolated func checkConfiguration(_ options: RequestOptions, request: PreparedRequest, name: String) throws(CurlewError) {
        try checkCacheConfiguration(options, request: request, name: name)
        if let queue = options.queue, queue.allSatisfy(\.isWhitespace) {
            var error = CurlewError(
                code: .invalidQueueName,
                message: "\(name) names the queue \"\(queue)\", which is empty (nil is no queue); nothing was sent",
                request: request.summary)
            error.stage = .configuration
            throw error
        }
        guard options.requiresAuthentication else { return }
        let skipped = options.skippedMiddleware.contains(.authorization)
        guard hasCredentialSource || options.middleware.contains(where: { $0.capabilities.providesCredentials }), !skipped else {
            var error = CurlewError(
                code: .missingCredentialSource,
                message: "\(name) requires authentication, but the client has no AuthorizationMiddleware (no credential source)\(skipped ? " for this call" : "")",
                request: request.summary)
            error.stage = .configuration
            throw error
        }
    }

    /// Waits in the call's queue (if any), then runs the work; a wait still going when the call's
    /// deadline passes ends with `.deadlineExceeded` and sends nothing.
    ///
    /// The slot is given back when the work returns, unless the body is streamed: then the work
    /// gets the ``QueueSlot`` to keep until the body has arrived (a stream is running until then).
    private nonisolated(nonsending) func queued<T: Sendable>(
        _ options: RequestOptions, reporter: EventReporter, request: RequestSummary, responseBody: ResponseBodyDisposition,
        _ work: nonisolated(nonsending) (_ slot: QueueSlot?) async throws -> T
    ) async throws -> T {
        guard let queue = options.queue else { return try await work(nil) }
        reporter.report(.queued) { $0.queue = queue }
        guard responseBody.isStream else {
            return try await queues.runHere(in: queue, priority: options.priority, deadline: CallDeadline.current, request: request) {
                reporter.report(.dequeued) { $0.queue = queue }
                return try await work(nil)
            }
        }
        let slot = try await queues.heldSlot(in: queue, priority: options.priority, deadline: CallDeadline.current, request: request)
        defer { slot.giveBackUnlessKept() }
        reporter.report(.dequeued) { $0.queue = queue }
        do {
            return try await work(slot)
        } catch {
            // A failure that still hands its streamed body to the caller keeps the slot for it.
            slot.keep(forResponseIn: error)
            throw error
        }
    }

    /// The middleware for one call: the client's (already in phase order) and the call's own,
    /// without the skipped kinds.
    nonisolated func middlewareChain(for options: RequestOptions) -> [any APIMiddleware] {
        Self.middlewareChain(middleware, for: options)
    }

    /// The middleware for one call of a client whose own are `middleware`.
    nonisolated static func middlewareChain(_ middleware: [any APIMiddleware], for options: RequestOptions) -> [any APIMiddleware] {
        var chain = middleware
        if !options.middleware.isEmpty { chain = MiddlewareArrangement.arrange(chain + options.middleware) }
        if !options.skippedMiddleware.isEmpty { chain.removeAll { options.skippedMiddleware.contains($0.kind) } }
        return chain
    }

    /// Runs the chain around the transport and the inner checks, then `finish`, with a debug log
    /// line per call.
    @inline(__always)
    private nonisolated(nonsending) func exchange<R: Endpoint, Output: Sendable>(
        _ request: R, _ prepared: PreparedRequest, options: RequestOptions, responseBody: ResponseBodyDisposition,
        reporter: EventReporter, finish: @Sendable (RawResponse, RequestSummary) throws -> Output
    ) async throws -> Output {
        var environment = self.environment
        if let logger = CallLogging.override(for: options, client: configuration.logger) { environment.value.logger = logger }
        let logger = environment.value.logger
        let observation = CallObservation.make(options: options, request: prepared, name: reporter.requestName)
        var events = reporter
        events.meter = observation?.meter
        var context = MiddlewareContext(
            requestID: reporter.requestID, requestName: reporter.requestName,
            identity: .request(prepared, name: reporter.requestName, volatileParameters: options.volatileParameters),
            events: events, endpoint: request, environment: environment, options: options)
        context.responseBody = responseBody
        // A hold released on success waits for the decoded value, not the chain's response.
        let outcome = options.holdsLaterRequests?.release == .onSuccess ? CallOutcome() : nil
        if let outcome { context.callOutcome = outcome }
        let next =
            options.middleware.isEmpty && options.skippedMiddleware.isEmpty
            ? composedMiddleware : MiddlewareChain.compose(middlewareChain(for: options))

        // Nanoseconds on the engine's monotonic clock: an optional `ContinuousClock.Instant`
        // (a resilient standard-library type) was copied through value witnesses on every call.
        let started: UInt64? = logger.logLevel <= .debug ? EngineClock.now() : nil
        if logger.logLevel <= .trace {
            // Names only: header values (tokens, cookies, signatures) never reach a log.
            logger.trace("\(prepared.summary) headers: \(prepared.headers.map(\.name.canonicalName).joined(separator: ", ")), body: \(prepared.content?.length ?? 0) bytes")
        }
        do {
            let chain = next
            let callContext = context
            let raw: RawResponse
            let output: Output
            do {
                if observation == nil {
                    // Nothing to record: no span scope, one async frame less.
                    raw = try await chain(prepared, callContext)
                    output = try finish(raw, prepared.summary)
                } else {
                    (raw, output) = try await CallObservation.run(observation, prepared) {
                        let raw = try await chain(prepared, callContext)
                        return (raw, try finish(raw, prepared.summary))
                    }
                }
            } catch {
                outcome?.settle(succeeded: false)
                EnvelopeEvents.reportFailure(error, envelope: request.envelope, reporter: reporter)
                throw error
            }
            outcome?.settle(succeeded: true)
            EnvelopeEvents.reportSuccess(raw, envelope: request.envelope, summary: prepared.summary, reporter: reporter)
            if let started { logger.debug("\(prepared.summary) → \(raw.status.code) in \(Self.elapsed(since: started))") }
            reporter.report(.finished) { event in
                event.status = raw.status
                event.source = raw.source
                event.metrics = raw.metrics
            }
            return output
        } catch {
            if let started { logger.debug("\(prepared.summary) → \((error as? CurlewError)?.code.description ?? "cancelled") in \(Self.elapsed(since: started))") }
            throw error
        }
    }

    /// The time since `started` (``EngineClock`` nanoseconds), for the debug line of a call.
    private static func elapsed(since started: UInt64) -> Duration {
        .nanoseconds(Int64(truncatingIfNeeded: EngineClock.now() &- started))
    }

    /// Gives an error its stage (unless it has one) and its request; a non-``/CurlewCore/CurlewError`` from a
    /// middleware becomes `.middlewareFailed` with the original as ``/CurlewCore/CurlewError/underlying``.
    /// Cancellation passes through untouched.
    static func stamped(_ error: any Error, stage: CurlewError.Stage, request: RequestSummary, middleware: MiddlewareKind? = nil) -> any Error {
        if error is CancellationError { return error }
        var curlew: CurlewError
        if let error = error as? CurlewError {
            curlew = error
        } else if let middleware {
            curlew = CurlewError(code: .middlewareFailed, message: "middleware \(middleware) failed: \(error)", underlying: error)
        } else {
            curlew = CurlewError.wrapping(error, request: request)
        }
        if curlew.stage == nil { curlew.stage = stage }
        if curlew.request == nil { curlew.request = request }
        return curlew
    }

    /// What leaves the client: a ``/CurlewCore/CurlewError``, or `CancellationError` for any cancellation.
    static func surface(_ error: any Error, request: RequestSummary?) -> any Error {
        if error is CancellationError { return error }
        guard var curlew = error as? CurlewError else {
            return CurlewError.wrapping(error, request: request)
        }
        if curlew.code == .cancelled { return CancellationError() }
        if curlew.request == nil { curlew.request = request }
        return curlew
    }
}
