internal import HTTPTypes

/// The middleware around the transport, composed into one ``MiddlewareNext``.
///
/// Composition depends only on the middleware list, never on the call: what the innermost step
/// needs from the call (the transport, the endpoint whose ``Endpoint/accepts(_:)`` and envelope
/// check the response) travels in the ``MiddlewareContext``. So a client composes its own list
/// once, when it is created, and a call that adds or skips middleware composes its own.
/// Composing per call cost a closure allocation per layer, plus one for the innermost step and
/// one for each redirect step.
enum MiddlewareChain {
    /// `middleware` outermost first, as ``APIClient/middlewareChain(for:)`` returns it.
    ///
    /// Redirects are followed above the first middleware that depends on the URL (authorization,
    /// signing, …): it and everything inside it, phase-less middleware placed after it included,
    /// run again for every hop, so no hop inherits the headers they added for another URL.
    static func compose(_ middleware: [any APIMiddleware]) -> MiddlewareNext {
        var next: MiddlewareNext = innermost
        let redirectBoundary = middleware.firstIndex(where: RedirectStep.dependsOnURL) ?? middleware.count
        if redirectBoundary == middleware.count { next = RedirectStep.wrap(next) }
        for (index, layer) in middleware.enumerated().reversed() {
            let inner = next
            next = { request, context in
                do {
                    return try await layer.intercept(request, context: context, next: inner)
                } catch {
                    throw APIClient.stamped(error, stage: .middleware(layer.kind), request: request.summary, middleware: layer.kind)
                }
            }
            if index == redirectBoundary { next = RedirectStep.wrap(next) }
        }
        return next
    }

    /// The transport, then the endpoint's status and envelope checks. Under a deadline
    /// (``withDeadline(in:isolation:operation:)``) the attempt's total timeout is capped by the
    /// time left, and an attempt that would start after it fails without sending.
    private static let innermost: MiddlewareNext = { prepared, context in
        // An open breaker's call that no failover origin took is refused after all.
        if let refusal = context.circuitRefusal { throw refusal }
        let deadline = CallDeadline.current
        var prepared = prepared
        let capped =
            try deadline.map { deadline throws(CurlewError) in
                try CallDeadline.cap(&prepared, by: deadline, now: .now, header: context.deadlineHeader)
            } ?? false
        context.events.report(.attempt) { $0.attempt = context.attempt }
        let raw: RawResponse
        do {
            if CallObservation.current == nil {
                // Nothing observes the attempt: two async frames (and executor checks) fewer.
                raw = try await context.transport.send(prepared, context: context.transportContext)
            } else {
                raw = try await CallObservation.attempt(prepared, attempt: context.attempt) {
                    try await context.transport.send($0, context: context.transportContext)
                }
            }
        } catch let error as CurlewError where capped {
            throw numbered(APIClient.stamped(CallDeadline.translate(error), stage: .transport, request: prepared.summary), context.attempt)
        } catch {
            throw numbered(APIClient.stamped(error, stage: .transport, request: prepared.summary), context.attempt)
        }
        // A hop the redirect step follows is not the call's answer, and a status an outer step
        // answers itself (a 304, a 416) is its to handle: no status check for either.
        if context.followsRedirects, RedirectPolicy.location(toFollow: raw) != nil {
            return raw
        }
        if !context.handledStatuses.isEmpty, context.handledStatuses.contains(raw.status.code) { return raw }
        guard let endpoint = context.endpoint else { return raw }
        do {
            return try ResponseCheck.inspect(raw, of: endpoint, summary: prepared.summary)
        } catch {
            throw numbered(error, context.attempt)
        }
    }

    /// `error` with the attempt it ended, when it is a ``/CurlewCore/CurlewError``.
    private static func numbered(_ error: any Error, _ attempt: Int) -> any Error {
        guard var curlew = error as? CurlewError else { return error }
        curlew.attempt = attempt
        return curlew
    }
}
