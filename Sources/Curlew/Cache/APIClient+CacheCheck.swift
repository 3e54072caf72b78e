extension APIClient {
    /// Fails a call whose ``RequestOptions/cache`` asks for the cache on a client (or call) whose
    /// middleware declares no cache (``MiddlewareCapabilities/responseCache``): a ``CachePolicy/cacheOnly(maxAge:)`` lookup must
    /// never turn into a network request, and no other policy may silently do nothing.
    nonisolated func checkCacheConfiguration(_ options: RequestOptions, request: PreparedRequest, name: String) throws(CurlewError) {
        guard options.cache != .networkOnly else { return }
        if let refusal = options.cache.refusal(request: request.summary) { throw refusal }
        // The client's middleware were read once, at init; only the call's own are asked here.
        let skippedKinds = options.skippedMiddleware
        guard
            !responseCacheKinds.contains(where: { !skippedKinds.contains($0) })
                && !options.middleware.contains(where: { !skippedKinds.contains($0.kind) && $0.capabilities.responseCache != nil })
        else { return }
        let skipped = skippedKinds.contains(.cache)
        var error = CurlewError(
            code: .cacheNotConfigured,
            message: "\(name) asks for the cache policy \(options.cache), but the client has no ResponseCache\(skipped ? " for this call" : "")",
            request: request.summary)
        error.stage = .configuration
        throw error
    }
}
