extension APIClient {
    /// Fails a call whose ``RequestOptions/cache`` asks for the cache on a client (or call) whose
    /// middleware declares no cache (``MiddlewareCapabilities/responseCache``): a ``CachePolicy/cacheOnly(maxAge:)`` lookup must
    /// never turn into a network request, and no other policy may silently do nothing.
    nonisolated func checkCacheConfiguration(_ options: RequestOptions, request: PreparedRequest, name: String) throws(CurlewError) {
        guard options.cache != .networkOnly else { return }
        guard !middlewareChain(for: options).contains(where: { $0.capabilities.responseCache != nil }) else { return }
        let skipped = options.skippedMiddleware.contains(.cache)
        var error = CurlewError(
            code: .cacheNotConfigured,
            message: "\(name) asks for the cache policy \(options.cache), but the client has no ResponseCache\(skipped ? " for this call" : "")",
            request: request.summary)
        error.stage = .configuration
        throw error
    }
}
