/// How a call uses the ``ResponseCache``: the policies apps ask for (a fixed lifetime, write-only,
/// an offline fallback, cache-only) plus HTTP caching. Set it per endpoint type in
/// ``Endpoint/options`` or per call:
///
/// ```swift
/// let feed = try await client.send(FeedRequest()) { $0.cache = .maxAge(.hours(8)) }
/// ```
///
/// Any policy but ``networkOnly`` on a client without a ``ResponseCache`` fails with
/// ``/CurlewCore/CurlewError/Code/cacheNotConfigured`` (stage ``/CurlewCore/CurlewError/Stage/configuration``) before
/// anything is sent. Downloads honour the policy (a stored answer is written to the file); a
/// stream with any policy but ``networkOnly`` fails with ``/CurlewCore/CurlewError/Code/cachePolicyConflict``.
public enum CachePolicy: Sendable, Hashable {
    /// The cache is not involved: no lookup, nothing stored. The default. (An unsafe request —
    /// `POST`, `PUT`, `DELETE`… — answered with a `2xx` or `3xx` still removes the stored answers
    /// of its URL, whatever its policy: RFC 9111 §4.4, see ``ResponseCache``.)
    case networkOnly
    /// Always fetch, then store the answer.
    case writeOnly
    /// Serve the stored answer while it is younger than `lifetime`, else fetch (with the stored
    /// validators) and store. By default the
    /// server's `no-cache`, `max-age`, `Expires` and `Age` can only make the stored answer stale
    /// sooner, never later; with `overridingServer: true` the app's lifetime wins (an 8-hour rule
    /// for a server that sends `no-cache`) — `no-store` and `Vary: *` are still never stored.
    case maxAge(CacheLifetime, overridingServer: Bool = false)
    /// Standard HTTP caching (RFC 9111) for a private cache: serve while fresh by
    /// `max-age`/`Expires` minus `Age` — or, without either, by a heuristic lifetime of 10 % of
    /// the time since `Last-Modified` (at most a day) for heuristically cacheable statuses —
    /// revalidate with `If-None-Match`/`If-Modified-Since` when stale, store what RFC 9111 §3
    /// lets a cache store: an answer with a heuristically cacheable status (200, 203, 204, 206,
    /// 300, 301, 308, 404, 405, 410, 414, 501) or with `max-age`, `Expires`, `public` or
    /// `private` (a `201`, or a `500` without any of these, is not stored; `private` answers
    /// are; `s-maxage` is ignored unless the cache is shared). The request's own `Cache-Control`
    /// counts too (RFC 9111 §5.2.1): `no-cache` or `max-age=0` goes to the server, `max-age=N`
    /// refuses a stored answer older than N seconds, `min-fresh=N` one that is not fresh for N
    /// more, `max-stale[=N]` accepts one stale by at most N seconds (any, without a value;
    /// served as ``ResponseSource/stale``, never when the server said `no-cache` or
    /// `must-revalidate`), and `only-if-cached` never contacts the server: without a usable
    /// stored answer the call fails with ``/CurlewCore/CurlewError/Code/cacheMiss``, as
    /// ``cacheOnly(maxAge:)`` does. The server's `stale-while-revalidate=N` serves an answer
    /// stale by at most N seconds at once and revalidates it in the background (one
    /// revalidation per stored answer at a time); its `stale-if-error=N` — or the request's own —
    /// serves one when the server answers `500`, `502`, `503` or `504` or cannot be reached
    /// (RFC 5861) — both as ``ResponseSource/stale``. Only GET and HEAD take part.
    case http
    /// Always ask the server, sending the stored validators; a `304` serves the stored bytes
    /// (source ``ResponseSource/revalidated``). The second step of cache-then-network.
    case alwaysRevalidate
    /// Fetch; when the network is unreachable (cannot connect, DNS failure, connect timeout — not
    /// an HTTP error, which is the server's answer), serve a stored answer no older than
    /// `staleFor`. `staleFor` is the app's explicit consent to
    /// stale answers offline, so an answer the server marked `no-cache` is served; one marked
    /// `must-revalidate` is served only while still fresh (RFC 9111 §5.2.2.2). The fallback comes
    /// after one connection attempt, not after the transport's connect retries
    /// (``/CurlewCore/ConnectRetryPolicy``); with no answer to fall back on, the call is sent again with them.
    case networkFirst(staleFor: CacheLifetime)
    /// Look in the cache only; never touch the network. Without a stored answer (or one older
    /// than `maxAge` when given) the call fails with ``/CurlewCore/CurlewError/Code/cacheMiss``.
    case cacheOnly(maxAge: CacheLifetime? = nil)
}

/// A span of time for cache policies: `.hours(8)`, `.minutes(5)`, `.seconds(30)`.
public struct CacheLifetime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The length in seconds.
    public var seconds: Double

    /// A lifetime of `seconds`. A negative or NaN lifetime is refused, not taken as zero: a call
    /// whose policy (or whose cache's ``ResponseCache/Configuration/retention``) has one fails
    /// unsent with ``/CurlewCore/CurlewError/Code/invalidConnectionSettings``.
    public init(seconds: Double) { self.seconds = seconds }

    /// A lifetime equal to `duration`.
    public init(_ duration: Duration) {
        let parts = duration.components
        self.init(seconds: Double(parts.seconds) + Double(parts.attoseconds) / 1e18)
    }

    /// `n` seconds.
    public static func seconds(_ n: Double) -> CacheLifetime { CacheLifetime(seconds: n) }
    /// `n` minutes.
    public static func minutes(_ n: Double) -> CacheLifetime { CacheLifetime(seconds: n * 60) }
    /// `n` hours.
    public static func hours(_ n: Double) -> CacheLifetime { CacheLifetime(seconds: n * 3_600) }
    /// `n` days.
    public static func days(_ n: Double) -> CacheLifetime { CacheLifetime(seconds: n * 86_400) }

    /// Shorter first.
    public static func < (lhs: CacheLifetime, rhs: CacheLifetime) -> Bool { lhs.seconds < rhs.seconds }

    /// E.g. `28800s`.
    public var description: String { "\(seconds)s" }
}

extension CacheLifetime {
    /// Whether a cache can honour this lifetime: zero or more (infinity included), not NaN.
    var isValid: Bool { seconds >= 0 }
}

extension CachePolicy {
    /// The error a call with this policy fails with when its lifetime cannot be honoured.
    func refusal(request: RequestSummary) -> CurlewError? {
        let (name, lifetime): (String, CacheLifetime?) =
            switch self {
            case .maxAge(let lifetime, _): ("maxAge", lifetime)
            case .networkFirst(let staleFor): ("networkFirst(staleFor:)", staleFor)
            case .cacheOnly(let maxAge): ("cacheOnly(maxAge:)", maxAge)
            case .networkOnly, .writeOnly, .http, .alwaysRevalidate: ("", nil)
            }
        guard let lifetime, !lifetime.isValid else { return nil }
        return .refusedSetting("the cache policy \(name)'s lifetime", "zero or more", "\(lifetime)", request: request)
    }
}
