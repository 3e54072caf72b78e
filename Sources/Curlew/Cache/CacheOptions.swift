/// The cache policy option (``RequestOptions/cache``).
enum CachePolicyKey: RequestOptionKey {
    static let defaultValue = CachePolicy.networkOnly
}

/// The custom cache key option (``RequestOptions/cacheKey``).
enum CacheKeyOptionKey: RequestOptionKey {
    static let defaultValue: String? = nil
}

/// The cache key addition option (``RequestOptions/cacheKeySuffix``).
enum CacheKeySuffixOptionKey: RequestOptionKey {
    static let defaultValue: String? = nil
}

/// The per-endpoint cache version option (``RequestOptions/cacheVersion``).
enum CacheVersionOptionKey: RequestOptionKey {
    static let defaultValue: String? = nil
}

extension RequestOptions {
    /// How this call uses the client's ``ResponseCache``. Default: ``CachePolicy/networkOnly``.
    public var cache: CachePolicy {
        get { self[CachePolicyKey.self] }
        set { self[CachePolicyKey.self] = newValue }
    }

    /// Replaces the request part of the cache key (method, URL without volatile parameters,
    /// body digest), e.g. `"search/\(keyword)"`. The cache version and
    /// the credential scope are still added, so a custom key never crosses accounts.
    public var cacheKey: String? {
        get { self[CacheKeyOptionKey.self] }
        set { self[CacheKeyOptionKey.self] = newValue }
    }

    /// Added to the request part of the cache key instead of replacing it:
    /// answers of the same request with
    /// different suffixes are stored apart. Kept only as a SHA-256 digest, so a sensitive value
    /// (a user id, a secret) never reaches the cache's storage in clear. Invalidate such entries
    /// with ``APIClient/invalidateCache(for:options:)`` and the same suffix, or by key prefix.
    public var cacheKeySuffix: String? {
        get { self[CacheKeySuffixOptionKey.self] }
        set { self[CacheKeySuffixOptionKey.self] = newValue }
    }

    /// This endpoint's own cache version, added to ``ResponseCache/Configuration/version``:
    /// change it when the endpoint's answers change shape,
    /// and only its stored answers miss (the old ones age out with the cache's retention).
    public var cacheVersion: String? {
        get { self[CacheVersionOptionKey.self] }
        set { self[CacheVersionOptionKey.self] = newValue }
    }
}
