internal import Synchronization

/// An ordered list of base URLs (primary, secondary, …): requests go to the current one; a
/// connect-level failure (cannot connect, DNS, connect timeout) moves to the next and resends.
/// While another base URL is left, the transport does not retry a refused connection first
/// (``/CurlewCore/TransferOptions/maximumConnectAttempts`` is 1): the next base URL is tried at once.
/// It never fails over once a response arrived — a 500 is the server's answer, not an outage.
/// The client's base URL should be the first entry; request URLs under any entry (the entry
/// itself, or followed by `/`, `?` or `#`) are rewritten to the current one.
/// `http://127.0.0.1:1` does not cover `http://127.0.0.1:12345`, nor
/// `…/api` cover `…/apiary`.
public final class FailoverMiddleware: APIMiddleware {
    /// The base URLs in order of preference.
    public let baseURLs: [String]
    /// Index of the base URL in use, guarded by the mutex; it sticks until that one fails.
    private let current = Mutex(0)

    /// Creates the middleware; `baseURLs` must not be empty.
    public init(baseURLs: [String]) {
        self.baseURLs = baseURLs
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
        guard let path = baseURLs.lazy.compactMap({ Self.remainder(of: request.url, under: $0) }).first else {
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
            attempt.replaceURL(baseURLs[index] + path)
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
            }
        }
    }

    /// What follows `base` in `url` when `url` is under it: `base` itself, or `base` followed by
    /// `/`, `?` or `#` (or `base` ends with `/`); `nil` for a URL that merely starts with the
    /// same characters.
    static func remainder(of url: String, under base: String) -> String? {
        guard url.utf8.starts(with: base.utf8) else { return nil }
        let rest = url.utf8.dropFirst(base.utf8.count)
        guard let first = rest.first, base.utf8.last != UInt8(ascii: "/") else { return String(rest) }
        switch first {
        case UInt8(ascii: "/"), UInt8(ascii: "?"), UInt8(ascii: "#"): return String(rest)
        default: return nil
        }
    }

    package static func isConnectLevel(_ code: CurlewError.Code) -> Bool {
        code == .cannotConnect || code == .dnsFailure || code == .connectTimeout
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
