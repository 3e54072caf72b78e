internal import Synchronization

/// An ordered list of base URLs (primary, secondary, …): requests go to the current one; a
/// connect-level failure (cannot connect, DNS, connect timeout) moves to the next and resends.
/// While another base URL is left, the transport does not retry a refused connection first
/// (``/CurlewCore/TransferOptions/maximumConnectAttempts`` is 1): the next base URL is tried at once.
/// It never fails over once a response arrived — a 500 is the server's answer, not an outage.
/// The client's base URL should be the first entry; request URLs under any entry are rewritten
/// to the current one. A URL is under an entry when it has the entry's scheme, host and port
/// (compared as origins: `HTTPS://API.example.com:443` is `https://api.example.com`) and its
/// path is the entry's path or continues it after a `/`: `http://127.0.0.1:1` does not cover
/// `http://127.0.0.1:12345`, nor `…/api` cover `…/apiary`. An entry's own query
/// (`https://eu.example.com/v1?key=EU`, kept after the path as the client keeps its base URL's)
/// is not part of the match: the rewritten URL carries the current entry's query in its place,
/// before the request's own query items.
public final class FailoverMiddleware: APIMiddleware {
    /// The base URLs in order of preference.
    public let baseURLs: [String]
    /// ``baseURLs`` taken apart for matching and rewriting, in the same order.
    private let entries: [Entry]
    /// Index of the base URL in use, guarded by the mutex; it sticks until that one fails.
    private let current = Mutex(0)

    /// Creates the middleware; `baseURLs` must not be empty.
    public init(baseURLs: [String]) {
        self.baseURLs = baseURLs
        self.entries = baseURLs.map(Entry.init)
    }

    /// `.failover`.
    public var kind: MiddlewareKind { .failover }

    /// ``MiddlewarePhase/failover``.
    public var phase: MiddlewarePhase? { .failover }
    /// Its base URLs are the client's own origins.
    public var capabilities: MiddlewareCapabilities { MiddlewareCapabilities(trustedOrigins: baseURLs) }

    /// The base URL requests go to now.
    public var currentBaseURL: String? {
        let index = current.withLock { $0 }
        return baseURLs.indices.contains(index) ? baseURLs[index] : nil
    }

    /// Sends to the current base URL, moving along the list on connect-level failures. A hedge of
    /// `CurlewResilience`'s `HedgingMiddleware` with `hedgesToFailover` starts at the next one.
    public nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        guard let rest = Self.remainder(of: request.url, under: entries) else {
            return try await next(request, context)
        }
        // A hedge to the failover origin, or a call an open breaker diverts, starts past the base
        // URL in use; a diverted call never comes back to it.
        var index = (current.withLock { $0 } + context.failoverStep) % baseURLs.count
        var tried = 0
        var context = context
        let diverted = context.circuitRefusal != nil
        if diverted {
            guard baseURLs.count > 1 else { return try await next(request, context) }
            context.circuitRefusal = nil
        }
        while true {
            var attempt = request
            attempt.replaceURL(rest.url(under: entries[index]))
            // While another origin is left, trying it is the retry: the transport does not retry
            // this one's connection first (``/CurlewCore/ConnectRetryPolicy``). The last one gets the
            // transport's retries, unless the request chose its own.
            if tried + 1 < baseURLs.count - (diverted ? 1 : 0), attempt.options.maximumConnectAttempts == nil {
                attempt.options.maximumConnectAttempts = 1
            }
            do {
                return try await next(attempt, context)
            } catch let error as CurlewError where Self.isConnectLevel(error.code) {
                tried += 1
                guard tried < baseURLs.count - (diverted ? 1 : 0) else { throw error }
                let failed = index
                index = current.withLock { current in
                    if current == failed { current = (failed + 1) % self.baseURLs.count }
                    return current
                }
                context.logger.debug(
                    "failover: \(RequestSummary.redact(url: baseURLs[failed], secretKeyFragments: RequestSummary.defaultSecretKeyFragments)) unreachable (\(error.code)); now using \(RequestSummary.redact(url: baseURLs[index], secretKeyFragments: RequestSummary.defaultSecretKeyFragments))"
                )
                // A one-shot body was read by the attempt that failed: it cannot go to the next
                // origin (later calls do).
                guard request.content?.isReplayable ?? true else { throw error }
            }
        }
    }

    /// A base URL taken apart: what request URLs under it start with, its origin and path for
    /// URLs spelled differently, and its own query.
    struct Entry: Sendable {
        /// The base URL without its query and trailing `/`s, as written (`https://h/v1`).
        let stem: String
        /// `scheme://host:port` of the base URL (``TrustedOrigins/origin(of:)``); `nil` when it
        /// is not an http(s) URL.
        let origin: String?
        /// The stem's path (`/v1`), empty for none.
        let path: String
        /// The base URL's own query without `?` (`key=EU`), empty for none.
        let query: Substring

        init(_ baseURL: String) {
            var stem = Substring(baseURL)
            if let fragment = stem.firstIndex(of: "#") { stem = stem[..<fragment] }
            var query: Substring = ""
            if let mark = stem.firstIndex(of: "?") {
                query = stem[stem.index(after: mark)...]
                stem = stem[..<mark]
            }
            let authority = Entry.authorityStart(of: stem)
            while stem.hasSuffix("/"), stem.endIndex > authority { stem = stem.dropLast() }
            self.stem = String(stem)
            self.origin = TrustedOrigins.origin(of: self.stem)
            self.path = String(stem[(stem[authority...].firstIndex(of: "/") ?? stem.endIndex)...])
            self.query = query
        }

        /// Where the authority begins: after `scheme://`, or at the start.
        static func authorityStart(of url: Substring) -> Substring.Index {
            url.range(of: "://")?.upperBound ?? url.startIndex
        }
    }

    /// A request URL under an entry, with the entry taken off: the path below it, the query
    /// without the entry's own query, the fragment.
    struct Remainder {
        /// What follows the entry's path (`/items/1`), empty for the entry itself.
        var path: Substring
        /// The request's query without the entry's own query; `nil` for none left.
        var query: Substring?
        /// The fragment without `#`; `nil` for none.
        var fragment: Substring?

        /// The URL under `entry`: its stem, this path, the entry's query before this one.
        func url(under entry: Entry) -> String {
            var url = entry.stem
            url += path
            switch (entry.query.isEmpty, query) {
            case (true, nil): break
            case (true, let own?): url += "?" + own
            case (false, nil): url += "?" + entry.query
            case (false, let own?): url += own.isEmpty ? "?" + entry.query : "?" + entry.query + "&" + own
            }
            if let fragment { url += "#" + fragment }
            return url
        }
    }

    /// The first entry `url` is under and what follows it, or `nil` when it is under none. The
    /// common spelling (the URL starts with the entry's stem, as the client builds it) is one
    /// byte comparison per entry; another spelling of the same origin (upper-case host, default
    /// port written out) is compared as origin and path.
    static func remainder(of url: String, under entries: [Entry]) -> Remainder? {
        for entry in entries where url.utf8.starts(with: entry.stem.utf8) {
            let rest = Substring(url).dropFirst(entry.stem.count)
            if isBoundary(rest) { return Remainder(rest, taking: entry) }
        }
        guard let origin = TrustedOrigins.origin(of: url) else { return nil }
        let whole = Substring(url)
        let authority = Entry.authorityStart(of: whole)
        let pathStart = whole[authority...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? whole.endIndex
        let afterAuthority = whole[pathStart...]
        for entry in entries where entry.origin == origin && afterAuthority.hasPrefix(entry.path) {
            let rest = afterAuthority.dropFirst(entry.path.count)
            if isBoundary(rest) { return Remainder(rest, taking: entry) }
        }
        return nil
    }

    /// Whether `rest` starts where a path segment ends: nothing, `/`, `?` or `#`.
    private static func isBoundary(_ rest: Substring) -> Bool {
        guard let first = rest.utf8.first else { return true }
        return first == UInt8(ascii: "/") || first == UInt8(ascii: "?") || first == UInt8(ascii: "#")
    }

    package static func isConnectLevel(_ code: CurlewError.Code) -> Bool {
        code == .cannotConnect || code == .dnsFailure || code == .connectTimeout
    }
}

extension FailoverMiddleware.Remainder {
    /// Takes `rest` (what follows `entry`'s path in a URL) apart, dropping the entry's own query
    /// from the front of the URL's query, where the client put it.
    init(_ rest: Substring, taking entry: FailoverMiddleware.Entry) {
        var rest = rest
        if let mark = rest.firstIndex(of: "#") {
            fragment = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        guard let mark = rest.firstIndex(of: "?") else {
            path = rest
            return
        }
        path = rest[..<mark]
        var query = rest[rest.index(after: mark)...]
        if !entry.query.isEmpty, query.hasPrefix(entry.query) {
            let after = query.dropFirst(entry.query.count)
            if after.isEmpty {
                self.query = nil
                return
            }
            if after.first == "&" { query = after.dropFirst() }
        }
        self.query = query
    }
}

/// Rewrites each request's URL — CDN hosts, environment switching.
///
/// The origins it rewrites to are the user's own when listed in `trusting`: calls there keep the
/// token, signature and common arguments. A rewritten URL elsewhere gets none of them, and a
/// login-required call that would go there fails with `.notLoggedIn` before anything is sent.
///
/// ```swift
/// let staging = URLRewriteMiddleware(trusting: ["https://staging.example.com"]) {
///     $0.replacingOccurrences(of: "https://api.example.com", with: "https://staging.example.com")
/// }
/// ```
public struct URLRewriteMiddleware: APIMiddleware {
    private let rewrite: @Sendable (String) -> String
    /// The origins (or base URLs) the rewrite sends to that are trusted like the client's base URL.
    public let trustedTargets: [String]

    /// Creates the middleware from a function of the absolute URL.
    /// - Parameters:
    ///   - trusting: Origins or base URLs the rewrite sends to that receive credentials,
    ///     signatures and common arguments like the client's base URL. Default: none.
    ///   - rewrite: The new absolute URL for an absolute URL.
    public init(trusting: [String] = [], _ rewrite: @escaping @Sendable (String) -> String) {
        self.rewrite = rewrite
        self.trustedTargets = trusting
    }

    /// ``trustedTargets`` are trusted origins.
    public var capabilities: MiddlewareCapabilities { MiddlewareCapabilities(trustedOrigins: trustedTargets) }

    /// `.urlRewrite`.
    public var kind: MiddlewareKind { .urlRewrite }

    /// ``MiddlewarePhase/urlRewrite``.
    public var phase: MiddlewarePhase? { .urlRewrite }

    /// Sends to the rewritten URL; a rewrite to anything but http(s) fails with `.unsupportedScheme`.
    public nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        var request = request
        let url = rewrite(request.url)
        if url != request.url {
            try RequestURLBuilder.validateAbsolute(url, method: request.method)
            request.replaceURL(url)
        }
        return try await next(request, context)
    }
}
