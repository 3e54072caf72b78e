internal import Tracing

extension CallObservation {
    /// Wraps a ``TokenRefreshMiddleware``'s refresher so that the refresh it runs — once, however
    /// many calls wait for it (``TokenStore``) — is counted with its outcome
    /// (`curlew_credential_refreshes_total`, `outcome` = `success`/`failure`) and traced as a span
    /// `credential refresh` (kind `client`), a child of the span of the call that started it; a
    /// request the refresher sends nests under it.
    ///
    /// Returns `refresher` unchanged when the calling task has no observation (instrumentation off).
    static func observingRefresh(_ refresher: @escaping TokenStore.Refresher) -> TokenStore.Refresher {
        guard let observation = current else { return refresher }
        // The call span of the request that hit the expired credential.
        let parent = ServiceContext.current ?? .topLevel
        return { credential in
            let span = observation.tracer?.startSpan("credential refresh", context: parent, ofKind: .client)
            span?.attributes["curlew.request.name"] = observation.requestName
            do {
                let fresh = try await ServiceContext.$current.withValue(span?.context ?? parent) { try await refresher(credential) }
                observation.meter?.recordRefresh(succeeded: true)
                span?.end()
                return fresh
            } catch {
                observation.meter?.recordRefresh(succeeded: false)
                if let span, !(error is CancellationError) {
                    span.recordError(error)
                    span.setStatus(SpanStatus(code: .error, message: (error as? CurlewError)?.code.description))
                }
                span?.end()
                throw error
            }
        }
    }
}
