internal import Foundation
internal import HTTPTypes

/// The one place redirects are followed: for client calls, *above* the middleware that depend on
/// the URL (authorization, common arguments, server clock, signing — phases from
/// ``MiddlewarePhase/authorization`` inward), so each hop is authorised and signed again for the
/// URL it goes to. The policy is ``RedirectPolicy``'s; transports never follow, and drop the body
/// of a hop this step follows unread.
///
/// The hops share the call's ``/CurlewCore/TransferOptions/totalTimeout``: each is sent with what
/// the ones before it left, and none starts once it is spent (`.totalTimeout`).
///
/// A hop that stays on the original request's origin keeps the call's trusted origins; a hop to
/// another origin gets none, so no credential, common argument or signature is added to it.
enum RedirectStep {
    /// Whether `middleware` depends on the request URL and must run again on every hop.
    static func dependsOnURL(_ middleware: any APIMiddleware) -> Bool {
        middleware.phase.map { $0 >= .authorization } ?? false
    }

    /// Wraps `inner` (the URL-dependent middleware, the checks and the transport).
    static func wrap(_ inner: @escaping MiddlewareNext) -> MiddlewareNext {
        { request, context in
            let limit = request.options.redirectLimit
            guard limit > 0 else { return try await inner(request, context) }
            var current = request
            // The total timeout is the call's: every hop gets what the hops before it left. The
            // clock is read only once a redirect arrives; the first hop's own time is in its metrics.
            let total = request.options.totalTimeout
            var started: ContinuousClock.Instant?
            // The transport returns 3xx responses as they are, the innermost check lets them
            // through; this step follows them.
            var hopContext = context
            hopContext.followsRedirects = true
            // The 3xx answers followed so far (written down for the cache with the final answer).
            var followed: [FollowedRedirect] = []
            while true {
                var response = try await inner(current, hopContext)
                guard let location = RedirectPolicy.location(toFollow: response) else {
                    if !followed.isEmpty { response.metrics?.redirectCount += followed.count }
                    context.redirectLog?.record(followed)
                    return response
                }
                RedirectPolicy.discardBody(of: response)
                guard followed.count < limit else {
                    throw refused(
                        CurlewError(code: .tooManyRedirects, message: "more than \(limit) redirects", request: request.summary), by: response)
                }
                followed.append(FollowedRedirect(url: current.url, status: response.status.code, headers: response.headers))
                context.redirectLog?.record(followed)
                do throws(CurlewError) {
                    current = try RedirectPolicy.nextRequest(after: current, status: response.status.code, location: location)
                } catch {
                    throw refused(error, by: response)
                }
                if URL(string: current.url).map(RedirectPolicy.origin) == URL(string: request.url).map(RedirectPolicy.origin) {
                    hopContext.trustedOrigins = context.trustedOrigins
                    hopContext.options.trustedOrigins = context.options.trustedOrigins
                    hopContext.options.requiresAuthentication = context.options.requiresAuthentication
                } else {
                    hopContext.trustedOrigins = TrustedOrigins([])
                    hopContext.options.trustedOrigins = []
                    // The login was checked on the first hop; the server chose to send the call
                    // elsewhere (a signed storage URL), which gets no credential but may be followed.
                    hopContext.options.requiresAuthentication = false
                }
                if let total {
                    let now = ContinuousClock.now
                    let begun = started ?? now - (response.metrics?.total ?? .zero)
                    started = begun
                    let left = total - (now - begun)
                    guard left > .zero else {
                        throw refused(
                            CurlewError(
                                code: .totalTimeout, message: "the total timeout (\(total)) ran out after \(followed.count) redirects",
                                request: current.summary),
                            by: response)
                    }
                    current.options.totalTimeout = left
                }
                let summary = current.summary
                context.events.report(.redirected) { $0.location = summary.redactedURL }
            }
        }
    }

    /// A redirect this step will not follow, born at the transport stage with the 3xx answer
    /// that asked for it: its status, headers (the `Location`) and metrics.
    private static func refused(_ error: CurlewError, by response: RawResponse) -> CurlewError {
        var error = error
        error.stage = .transport
        error.status = response.status
        error.headers = response.headers
        error.metrics = response.metrics
        return error
    }
}
