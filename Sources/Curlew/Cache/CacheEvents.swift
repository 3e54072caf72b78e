extension ClientEvent.Kind {
    /// A stored answer was served (``ClientEvent/source`` is ``ResponseSource/cache``, or
    /// ``ResponseSource/stale`` for a stale one, with the key and storage date;
    /// ``ClientEvent/reason`` says which policy or directive allowed it).
    public static let cacheHit = ClientEvent.Kind("cacheHit")
    /// The cache had no usable answer (``ClientEvent/reason``: absent, stale, variant…).
    public static let cacheMiss = ClientEvent.Kind("cacheMiss")
    /// The server answered `304 Not Modified`: the stored answer was refreshed and served.
    public static let cacheRevalidated = ClientEvent.Kind("cacheRevalidated")
    /// A network answer was stored (``ClientEvent/source`` carries the key).
    public static let cacheStored = ClientEvent.Kind("cacheStored")
}

extension ResponseSource {
    /// Served from the ``ResponseCache`` without asking the server; ``ResponseSource/storedAt``
    /// and ``ResponseSource/age`` tell how old it is, ``ResponseSource/detail`` is the cache key.
    public static let cache = ResponseSource("cache")
    /// The server confirmed the stored answer with `304 Not Modified`; the bytes came from the
    /// cache, the confirmation from the network.
    public static let revalidated = ResponseSource("revalidated")
    /// Served from the ``ResponseCache`` past its freshness lifetime, without the server's
    /// confirmation, because HTTP caching (``CachePolicy/http``) was allowed to: by the request's
    /// own `Cache-Control: max-stale`, or by the server's `stale-while-revalidate` (a
    /// revalidation runs in the background) or `stale-if-error` (the server failed or could not
    /// be reached; RFC 5861). ``ResponseSource/storedAt`` and ``ResponseSource/age``
    /// tell how old it is, ``ResponseSource/detail`` is the cache key. (The offline fallback of
    /// ``CachePolicy/networkFirst(staleFor:)`` and ``CachePolicy/cacheOnly(maxAge:)`` serve
    /// ``ResponseSource/cache``: there the app itself asked for whatever is stored.)
    public static let stale = ResponseSource("stale")
}
