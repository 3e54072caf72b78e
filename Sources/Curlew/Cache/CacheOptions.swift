/// The cache policy option (``RequestOptions/cache``).
enum CachePolicyKey: RequestOptionKey {
    static let defaultValue = CachePolicy.networkOnly
}

/// The custom cache key option (``RequestOptions/cacheKey``).
enum CacheKeyOptionKey: RequestOptionKey {
    static let defaultValue: String? = nil
}

extension RequestOptions {
    /// How this call uses the client's ``ResponseCache``. Default: ``CachePolicy/networkOnly``.
    public var cache: CachePolicy {
        get { self[CachePolicyKey.self] }
        set { self[CachePolicyKey.self] = newValue }
    }

    /// Replaces the request part of the cache key (method, URL without volatile parameters,
    /// body digest) — HAccess's `cacheKey`, e.g. `"search/\(keyword)"`. The cache version and
    /// the credential scope are still added, so a custom key never crosses accounts.
    public var cacheKey: String? {
        get { self[CacheKeyOptionKey.self] }
        set { self[CacheKeyOptionKey.self] = newValue }
    }
}
