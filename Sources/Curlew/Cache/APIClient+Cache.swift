extension APIClient {
    /// The client's ``ResponseCache``, when one is configured.
    public nonisolated var responseCache: ResponseCache? {
        for middleware in middleware {
            if let cache = middleware.capabilities.responseCache { return cache }
        }
        return nil
    }

    /// Cache then network: the
    /// stored answer first, when there is one (``APIResponse/source`` is ``ResponseSource/cache``
    /// with its ``ResponseSource/age``), then the fresh one from the server (``ResponseSource/network``,
    /// or ``ResponseSource/revalidated`` when the server answered `304`), which is stored.
    ///
    /// ```swift
    /// for try await page in client.cacheThenNetwork(FeedRequest()) {
    ///     render(page.value, stale: page.source == .cache)
    /// }
    /// ```
    ///
    /// When the fresh request fails the sequence ends by throwing that error — after the stored
    /// value, if there was one. A stored answer that no longer decodes is skipped. Without a
    /// ``ResponseCache`` on the client (or with it skipped for the call) the sequence throws
    /// ``/CurlewCore/CurlewError/Code/cacheNotConfigured`` at once and nothing is sent.
    /// - Parameters:
    ///   - request: The request.
    ///   - adjust: Changes a copy of ``Endpoint/options`` for both calls. The cache policy is not
    ///     yours to set here: the first step only reads the store, and the network step always
    ///     asks the server (sending the stored answer's validators, so an unchanged one costs a
    ///     `304`), whatever policy the endpoint declares — that is what "then network" means. To
    ///     let a fresh stored answer stand alone, `send` with ``CachePolicy/maxAge(_:overridingServer:)``.
    public nonisolated func cacheThenNetwork<R: Endpoint>(
        _ request: R, options adjust: ((inout RequestOptions) -> Void)? = nil
    ) -> some AsyncSequence<APIResponse<R.Response>, any Error> & Sendable {
        var options = request.options
        adjust?(&options)
        return CacheThenNetwork(client: self, request: request, options: options, hasCache: responseCache != nil)
    }

    /// Removes the stored answers of `request` for every account and variant; returns how many.
    /// - Throws: ``/CurlewCore/CurlewError`` when the request cannot be prepared.
    @discardableResult
    public nonisolated func invalidateCache<R: Endpoint>(for request: R, options adjust: ((inout RequestOptions) -> Void)? = nil) async throws -> Int {
        guard let cache = responseCache else { return 0 }
        var options = request.options
        adjust?(&options)
        let prepared = try prepare(request, baseURL: options.baseURL)
        let identity = RequestIdentity(prepared, name: String(describing: R.self), volatileParameters: options.volatileParameters)
        let part = CacheKey.requestPart(identity: identity, options: options, volatileParameters: cache.configuration.volatileParameters)
        return await cache.invalidate(.request(part))
    }
}

/// The answers of ``APIClient/cacheThenNetwork(_:options:)``: at most two, stored then fresh.
/// Callers see it as `some AsyncSequence<APIResponse<R.Response>, any Error>`.
struct CacheThenNetwork<R: Endpoint>: AsyncSequence, Sendable {
    /// A decoded response.
    typealias Element = APIResponse<R.Response>

    let client: APIClient
    let request: R
    let options: RequestOptions
    let hasCache: Bool

    /// Iterates: the stored answer (if any), then the network's.
    struct AsyncIterator: AsyncIteratorProtocol {
        let sequence: CacheThenNetwork
        var step = 0

        /// The next answer, `nil` after the fresh one.
        /// - Throws: The fresh call's error (after the stored answer); `CancellationError`.
        mutating func next() async throws -> Element? {
            if step == 0 {
                step = 1
                if sequence.hasCache {
                    var stored = sequence.options
                    stored.cache = .cacheOnly(maxAge: nil)
                    do {
                        return try await sequence.client.call(sequence.request, options: stored)
                    } catch let error as CurlewError where error.code == .cacheMiss || error.level == .dataFormat {
                        // Nothing stored, or stored bytes that no longer decode: go to the network.
                    }
                }
            }
            guard step == 1 else { return nil }
            step = 2
            var fresh = sequence.options
            fresh.cache = .alwaysRevalidate
            return try await sequence.client.call(sequence.request, options: fresh)
        }
    }

    /// Starts the sequence.
    func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(sequence: self)
    }
}
