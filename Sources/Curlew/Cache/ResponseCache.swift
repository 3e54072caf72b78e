public import Foundation
internal import HTTPTypes

/// The response cache: an actor owning a ``CacheStorage``, installed as middleware in the
/// outermost phase (``MiddlewarePhase/cache``).
///
/// It stores *bytes*, above token refresh, retry and signing (so timestamps, nonces and
/// signatures never reach its key) and below decoding (so a stored answer goes through the
/// envelope check, ``Endpoint/didReceive(_:)`` and decoding again). Only answers the endpoint
/// accepted and whose envelope succeeded are stored — everything returned by the inner chain.
///
/// ```swift
/// let cache = ResponseCache(storage: DiskCacheStorage(directory: cacheDirectory),
///                           credentials: .tokenStore(tokens))
/// let client = APIClient(configuration: ClientConfiguration(baseURL: base, middleware: [cache]))
/// let feed = try await client.send(FeedRequest()) { $0.cache = .maxAge(.hours(8)) }
/// ```
///
/// Each call's ``RequestOptions/cache`` picks the ``CachePolicy``; the default, network only,
/// leaves the cache out entirely. Keys, credential isolation and `Vary` are described in
/// ``CacheCredentials`` and the *Caching* article.
public actor ResponseCache: APIMiddleware {
    /// How the cache is set up.
    public struct Configuration: Sendable {
        /// Where entries live.
        public var storage: any CacheStorage
        /// Whose answers are stored (see ``CacheCredentials``).
        public var credentials: CacheCredentials
        /// Part of every key; change it to miss every older entry.
        public var version: String
        /// Query parameters left out of every key, in addition to each call's
        /// ``RequestOptions/volatileParameters``.
        public var volatileParameters: Set<String>
        /// Whether answers are shared between users (then `Cache-Control: private` answers to
        /// anonymous requests are not stored). Default: `false`, a private cache.
        public var isShared: Bool
        /// How long an entry may stay in storage at all; expiry sweeps delete older ones. A
        /// negative or NaN retention is refused: every call that uses the cache fails unsent with
        /// ``/CurlewCore/CurlewError/Code/invalidConnectionSettings``.
        public var retention: CacheLifetime
        /// The cache's clock (a test can move it).
        public var now: @Sendable () -> Date
        /// The largest downloaded body (``APIClient/download(_:to:options:adjust:)``) that is
        /// stored, in bytes; a larger download succeeds and is not stored (logged at debug).
        /// Entries are whole bodies in memory when stored and served. Default: 8 MiB.
        public var maximumDownloadEntrySize: Int = 8 << 20

        /// Creates a configuration.
        public init(
            storage: any CacheStorage, credentials: CacheCredentials, version: String = "1", volatileParameters: Set<String> = [],
            isShared: Bool = false, retention: CacheLifetime = .days(30), now: @escaping @Sendable () -> Date = { Date() }
        ) {
            self.storage = storage
            self.credentials = credentials
            self.version = version.replacingOccurrences(of: "|", with: "%7C")
            self.volatileParameters = volatileParameters
            self.isShared = isShared
            self.retention = retention
            self.now = now
        }
    }

    /// How the cache was set up.
    public nonisolated let configuration: Configuration
    /// The counters, updated without a hop to the actor.
    private nonisolated let counters = CacheCounters()
    /// Writes accepted but not yet finished by the storage.
    nonisolated let pending: PendingWrites
    /// The storage, when it is a tier shared with other instances (asked once, here).
    private nonisolated let sharedTier: (any SharedCacheTier)?

    /// Keys of the stored answers being revalidated in the background (`stale-while-revalidate`).
    private var backgroundRevalidations: Set<String> = []

    /// Claims the background revalidation of the entry under `key`; `false` when one is running.
    func beginBackgroundRevalidation(of key: String) -> Bool {
        backgroundRevalidations.insert(key).inserted
    }

    /// Ends the background revalidation of the entry under `key`.
    func endBackgroundRevalidation(of key: String) {
        backgroundRevalidations.remove(key)
    }

    /// Counters since the cache was created.
    package var statistics: CacheStatistics { counters.current }

    /// Creates a cache.
    public init(configuration: Configuration) {
        self.configuration = configuration
        let counters = counters
        self.pending = PendingWrites(storage: configuration.storage) { counters.record { $0.writeFailures += 1 } }
        self.sharedTier = configuration.storage as? any SharedCacheTier
    }

    /// Creates a cache over `storage`. `credentials` is required: say `.anonymous` when the
    /// client sends no credentials, or name the token store, so a logged-in user's answers are
    /// never served to another.
    public init(storage: any CacheStorage, credentials: CacheCredentials, version: String = "1", volatileParameters: Set<String> = []) {
        self.init(configuration: Configuration(storage: storage, credentials: credentials, version: version, volatileParameters: volatileParameters))
    }

    /// `.cache`.
    public nonisolated var kind: MiddlewareKind { .cache }
    /// ``MiddlewarePhase/cache``: outermost.
    public nonisolated var phase: MiddlewarePhase? { .cache }
    /// The client's response cache.
    public nonisolated var capabilities: MiddlewareCapabilities { MiddlewareCapabilities(responseCache: self) }

    /// Applies the call's ``CachePolicy``.
    ///
    /// A download takes part like any call: a stored answer is written to its file. A streamed
    /// body cannot: a policy other than ``CachePolicy/networkOnly`` on a stream fails with
    /// ``/CurlewCore/CurlewError/Code/cachePolicyConflict`` before anything is sent.
    ///
    /// Whatever the policy, a request with an unsafe method (anything but GET, HEAD, OPTIONS and
    /// TRACE) that the server answers with a `2xx` or `3xx` removes the stored GET and HEAD
    /// answers of its URL, and of its `Location` and `Content-Location` when they name the same
    /// origin (RFC 9111 §4.4), before the call returns: every account's and every variant,
    /// except entries stored under a custom ``RequestOptions/cacheKey`` or
    /// ``RequestOptions/cacheKeySuffix``.
    public nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        guard Self.isUnsafe(request.method) else { return try await respond(request, context: context, next: next) }
        // The redirects the unsafe request was answered with name more URLs it changed.
        var context = context
        let redirects = RedirectLog()
        context.redirectLog = redirects
        let raw: RawResponse
        do {
            raw = try await respond(request, context: context, next: next)
        } catch {
            // Answered with a redirect that was followed: the change was made, whatever the
            // hops after it answered.
            let followed = redirects.followed
            if let first = followed.first { await invalidateAfterUnsafe(request, status: first.status, source: .network, redirects: followed, final: nil, context: context) }
            throw error
        }
        await invalidateAfterUnsafe(request, status: redirects.followed.first?.status ?? raw.status.code, source: raw.source, redirects: redirects.followed, final: raw, context: context)
        return raw
    }

    /// ``intercept(_:context:next:)`` before the invalidation of an unsafe method.
    private nonisolated(nonsending) func respond(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        let policy = context.options.cache
        guard policy != .networkOnly else { return try await next(request, context) }
        guard configuration.retention.isValid else {
            throw CurlewError.refusedSetting("ResponseCache.Configuration.retention", "zero or more", "\(configuration.retention)", request: request.summary)
        }
        try CacheDownload.check(context.responseBody, policy: policy, request: request, name: context.requestName)
        guard !Self.bypasses(request) else {
            try Self.refuseNetwork(policy, request: request, context: context, reason: "a request with its own validators or range is not answered from the cache")
            return try await next(request, context)
        }
        guard let account = await Scope.resolve(request: request, context: context, credentials: configuration.credentials) else {
            try Self.refuseNetwork(policy, request: request, context: context, reason: "requires authentication and nobody is logged in")
            context.events.report(.cacheMiss) { $0.reason = "requires authentication and nobody is logged in" }
            return try await next(request, context)
        }
        let key = CacheKey(
            version: CacheKey.versionPart(cache: configuration.version, options: context.options), scope: account.scope,
            request: CacheKey.requestPart(identity: context.identity, options: context.options, volatileParameters: configuration.volatileParameters))
        let variants = sharedTier == nil ? nil : VariantLookups()
        let call = CacheCall(cache: self, policy: policy, key: key, account: account, request: request, context: context, variantLookups: variants)
        let raw: RawResponse
        do {
            raw = try await call.run(next)
        } catch {
            await endLookups(key.full, variants)
            throw error
        }
        await endLookups(key.full, variants)
        // Only a stored answer is written to the download's file here: a network answer that
        // stayed in memory (an error status, a refused media type) is the client's to fail, and
        // must not overwrite a partial file it may still resume.
        guard let target = CacheDownload.target(context.responseBody), raw.source != .network else { return raw }
        return try CacheDownload.materialize(raw, into: target, request: request)
    }

    /// Tells a shared tier that a call's lookups have ended — of `full`, and of each `Vary`
    /// variant it looked up (a variant's miss holds a single-flight lock too) — and whether an
    /// answer is being stored under each.
    private nonisolated func endLookups(_ full: String, _ variants: VariantLookups?) async {
        guard let sharedTier else { return }
        await endLookup(of: full, in: sharedTier)
        for key in variants?.keys ?? [] { await endLookup(of: key, in: sharedTier) }
    }

    private nonisolated func endLookup(of key: String, in sharedTier: any SharedCacheTier) async {
        var storing = false
        if case .store = pending.operation(for: key) { storing = true }
        await sharedTier.lookupEnded(for: key, storing: storing)
    }

    /// Whether a method is unsafe or of unknown safety (RFC 9110 §9.2.1): a successful answer
    /// to it invalidates the stored answers of its URL.
    private nonisolated static func isUnsafe(_ method: HTTPRequest.Method) -> Bool {
        method != .get && method != .head && method != .options && method != .trace
    }

    /// RFC 9111 §4.4: after a `2xx`/`3xx` network answer to an unsafe request, removes the stored
    /// GET and HEAD answers of the request's URL and of its same-origin `Location` and
    /// `Content-Location`.
    private nonisolated func invalidateAfterUnsafe(
        _ request: PreparedRequest, status: Int, source: ResponseSource, redirects: [FollowedRedirect], final raw: RawResponse?,
        context: MiddlewareContext
    ) async {
        guard (200..<400).contains(status), source == .network else { return }
        let volatile = configuration.volatileParameters.union(context.options.volatileParameters)
        var urls = [RequestIdentity.removing(volatile, from: context.identity.url)]
        func add(_ url: String) {
            let cleaned = RequestIdentity.removing(volatile, from: url)
            if !urls.contains(cleaned) { urls.append(cleaned) }
        }
        // Every hop's URL (a 307 or 308 sends the unsafe method on) and every `Location`, then
        // the final answer's `Location` and `Content-Location`; on the request's origin only.
        for hop in redirects {
            if let url = Self.sameOrigin(hop.url, as: request.url) { add(url) }
            if let value = hop.headers[.location], let url = Self.sameOrigin(value, as: hop.url) { add(url) }
        }
        for name in [HTTPField.Name.location, .contentLocation] {
            guard let value = raw?.headers[name], let url = Self.sameOrigin(value, as: raw?.url ?? request.url) else { continue }
            add(url)
        }
        let targets = urls.flatMap { url in [CacheInvalidation.request("GET " + url), .request("HEAD " + url)] }
        let removed = await invalidate(targets)
        if removed > 0 { context.logger.debug("cache: \(request.summary) removed \(removed) stored answers of \(urls)") }
    }

    /// `reference` resolved against `base`, when it names the same origin (scheme, host, port),
    /// written as stored keys write URLs: scheme and host in lower case, no default port.
    nonisolated static func sameOrigin(_ reference: String, as base: String) -> String? {
        guard let baseURL = URL(string: base), let resolved = URL(string: reference, relativeTo: baseURL)?.absoluteURL,
            let scheme = resolved.scheme?.lowercased(), scheme == baseURL.scheme?.lowercased(),
            let host = resolved.host?.lowercased(), host == baseURL.host?.lowercased()
        else { return nil }
        let defaultPort = scheme == "https" ? 443 : 80
        guard (resolved.port ?? defaultPort) == (baseURL.port ?? defaultPort),
            var components = URLComponents(url: resolved, resolvingAgainstBaseURL: false)
        else { return nil }
        components.scheme = scheme
        components.host = host
        if components.port == defaultPort { components.port = nil }
        return components.string
    }

    /// Fails a call that may not contact the server — ``CachePolicy/cacheOnly(maxAge:)``, or
    /// ``CachePolicy/http`` with the request's `only-if-cached` — with `.cacheMiss` when the cache
    /// cannot answer it at all (`reason`): such a lookup never becomes a network request.
    private nonisolated static func refuseNetwork(
        _ policy: CachePolicy, request: PreparedRequest, context: MiddlewareContext, reason: String
    ) throws(CurlewError) {
        let cacheOnly = if case .cacheOnly = policy { true } else { false }
        guard cacheOnly || (policy == .http && HTTPCacheRules.Asked(request.headers).onlyIfCached) else { return }
        context.events.report(.cacheMiss) { $0.reason = reason }
        throw CurlewError(code: .cacheMiss, message: "no stored answer: \(reason) (cache only)", request: request.summary)
    }

    /// Requests the cache leaves alone: ones that carry their own validators or ranges.
    private nonisolated static func bypasses(_ request: PreparedRequest) -> Bool {
        let headers = request.headers
        return headers.contains(.ifNoneMatch) || headers.contains(.ifModifiedSince) || headers.contains(.range)
            || headers.contains(.ifMatch) || headers.contains(.ifUnmodifiedSince)
    }

    // MARK: Pending writes

    /// Returns when every answer accepted for storing so far has reached the storage (or failed
    /// to; a failed write is logged at debug level).
    ///
    /// Storing happens after the call that produced the answer has returned: the caller never
    /// waits for the write, fsync and rename. Until a write finishes, lookups through this cache
    /// already see the new entry (read-your-writes); another ``ResponseCache`` or process
    /// reading the same directory sees it only afterwards. Call this before shutting down, or in
    /// a test before looking at the storage directly.
    public nonisolated func waitForPendingWrites() async {
        await pending.waitUntilIdle()
    }

    /// The stored entry for a full key, pending writes first. `lookupBegan` is when the call's
    /// lookup began: a shared tier gives a variant's lookup what is left of the call's time
    /// budget (``SharedCacheTier``).
    nonisolated func entry(for key: String, lookupBegan: ContinuousClock.Instant? = nil) async -> CacheEntry? {
        switch pending.operation(for: key) {
        case .store(let entry): return entry
        case .remove: return nil
        case nil:
            if let lookupBegan, let sharedTier { return await sharedTier.entry(for: key, lookupBegan: lookupBegan) }
            return await configuration.storage.entry(for: key)
        }
    }

    // MARK: Invalidation

    /// Removes entries (after the pending writes have landed); returns how many.
    ///
    /// A storage that observes invalidations (a fleet's tiered storage) hears `target` as well,
    /// after the local removal, to carry it to the shared tier and the other instances.
    @discardableResult
    public nonisolated func invalidate(_ target: CacheInvalidation) async -> Int {
        await invalidate([target])
    }

    /// Removes the entries any of `targets` matches in one pass over the storage; a shared tier
    /// hears each target.
    nonisolated func invalidate(_ targets: [CacheInvalidation]) async -> Int {
        let version = configuration.version
        await pending.waitUntilIdle()
        let removed = await configuration.storage.removeEntries { full in
            guard let key = CacheKey.parse(full) else { return false }
            return targets.contains { $0.matches(key, version: version) }
        }
        for target in targets { await sharedTier?.didInvalidate(target) }
        return removed
    }

    /// Removes every entry of the account logged in now (call it before logging out); removes
    /// nothing and answers 0 when nobody is (anonymous answers belong to no account: remove them
    /// with ``invalidate(_:)``).
    @discardableResult
    public nonisolated func invalidateCurrentAccount() async -> Int {
        guard let account = await configuration.credentials.current() else { return 0 }
        return await invalidate(.account(account.identity))
    }

    /// Deletes entries older than ``Configuration/retention``.
    @discardableResult
    public nonisolated func sweep() async -> Int {
        await pending.waitUntilIdle()
        return await configuration.storage.removeExpired(before: configuration.now())
    }

    nonisolated func record(_ change: (inout CacheStatistics) -> Void) {
        counters.record(change)
    }
}

extension MiddlewareKind {
    /// ``ResponseCache``.
    public static let cache = MiddlewareKind("cache")
}

/// Counters of a ``ResponseCache``.
package struct CacheStatistics: Sendable, Hashable {
    /// Answers served from storage without asking the server (offline fallbacks included).
    package var hits = 0
    /// Lookups that found nothing usable.
    package var misses = 0
    /// `304 Not Modified` answers that refreshed an entry.
    package var revalidations = 0
    /// Network answers accepted for storing (written after the call returns; see
    /// ``ResponseCache/waitForPendingWrites()``).
    package var stores = 0
    /// Writes the storage refused (logged at debug; the requests succeeded). Counted when the
    /// write finishes, after the call.
    package var writeFailures = 0

    /// All zero.
    package init() {}
}

/// What ``ResponseCache/invalidate(_:)`` removes.
public enum CacheInvalidation: Sendable, Hashable {
    /// The entries (every scope and variant) of one request part of a key: `METHOD URL` as in
    /// ``RequestIdentity/key`` without volatile parameters, or a custom ``RequestOptions/cacheKey``.
    case request(String)
    /// The entries whose request part starts with this text, e.g. `"GET https://api.example.com/users/"`.
    case keyPrefix(String)
    /// Every entry of one account (the identity ``CacheCredentials`` reports): logout.
    case account(String)
    /// Every entry.
    case all

    package func matches(_ key: CacheKey, version: String) -> Bool {
        switch self {
        case .all: true
        case .request(let request): key.requestWithoutVariant == request
        case .keyPrefix(let prefix): key.request.hasPrefix(prefix)
        case .account(let identity): key.scope.contains(CacheKey.accountScope(identity))
        }
    }
}
