internal import Foundation
internal import HTTPTypes

/// One call through the ``ResponseCache``: the policy's decision, lookups with `Vary`, the
/// conditional fetch, `304` refresh and storing.
struct CacheCall: Sendable {
    let cache: ResponseCache
    let policy: CachePolicy
    let key: CacheKey
    let account: Scope
    let request: PreparedRequest
    let context: MiddlewareContext
    /// The `Vary` variant keys this call looked up, for a shared tier (`nil` without one).
    let variantLookups: VariantLookups?

    private var configuration: ResponseCache.Configuration { cache.configuration }

    func run(_ next: MiddlewareNext) async throws -> RawResponse {
        do {
            return try await decide(next)
        } catch let error as CurlewError where error.code == .sessionEnded {
            // The server ended this account's session: its stored answers go with it.
            if let identity = account.account?.identity { await cache.invalidate(.account(identity)) }
            throw error
        }
    }

    private func decide(_ next: MiddlewareNext) async throws -> RawResponse {
        switch policy {
        case .networkOnly:
            return try await next(request, context)
        case .writeOnly:
            return try await fetch(validating: nil, next)
        case .cacheOnly(let maxAge):
            let now = configuration.now()
            guard let entry = await lookup() else {
                miss("absent")
                throw CurlewError(code: .cacheMiss, message: "no stored answer (cache only)", request: request.summary)
            }
            if let maxAge, now.timeIntervalSince(entry.storedAt) >= maxAge.seconds {
                miss("older than \(maxAge)")
                throw CurlewError(code: .cacheMiss, message: "the stored answer is older than \(maxAge) (cache only)", request: request.summary)
            }
            return hit(entry, age: HTTPCacheRules.currentAge(of: entry, now: now), reason: "cache only")
        case .networkFirst(let staleFor):
            // The first fetch makes a single connection attempt (unless the request chose its
            // own number): an origin that refuses connections is answered from the cache at
            // once, not after the transport's connect retries and their seconds of back-off.
            // With nothing stored to fall back on, the fetch is made again with those retries.
            guard request.options.maximumConnectAttempts == nil else { return try await networkFirst(request, staleFor: staleFor, next) }
            var firstTry = request
            firstTry.options.maximumConnectAttempts = 1
            do {
                return try await fetch(firstTry, validating: nil, next)
            } catch let error as CurlewError where Self.transportWouldRetry(error) {
                if FailoverMiddleware.isConnectLevel(error.code),
                    let fallback = await offlineFallback(staleFor: staleFor, failure: error, final: false)
                {
                    return fallback
                }
                return try await networkFirst(request, staleFor: staleFor, next)
            }
        case .http:
            guard request.method == .get || request.method == .head else { return try await next(request, context) }
            return try await http(next)
        case .maxAge, .alwaysRevalidate:
            let entry = await lookup()
            if let entry, let age = ageIfFresh(entry, now: configuration.now()) { return hit(entry, age: age, reason: "fresh") }
            miss(entry == nil ? "absent" : "stale")
            return try await fetch(validating: entry, next)
        }
    }

    /// `.http`: the stored answer when it is fresh enough for the request's own `Cache-Control`
    /// (or stale within its `max-stale`, or within the server's `stale-while-revalidate`, which
    /// also starts a revalidation in the background), else the server's — or the stale answer
    /// within the server's `stale-if-error` when the server fails — or, for `only-if-cached`, a
    /// ``/CurlewCore/CurlewError/Code/cacheMiss`` without contacting it (RFC 9111 §5.2.1.7).
    private func http(_ next: MiddlewareNext) async throws -> RawResponse {
        let asked = HTTPCacheRules.Asked(request.headers)
        let entry = await lookup()
        if let entry {
            let answer = HTTPCacheRules.StoredAnswer(entry, now: configuration.now())
            let shared = configuration.isShared
            switch HTTPCacheRules.usability(of: answer, asked: asked, shared: shared) {
            case .fresh: return hit(entry, age: answer.age, reason: "fresh")
            case .staleAccepted: return hit(entry, age: answer.age, reason: "stale, within the request's max-stale", stale: true)
            case .unusable:
                guard HTTPCacheRules.staleAllowed(by: .whileRevalidate, answer: answer, asked: asked, shared: shared) else { break }
                // `only-if-cached`: not even the cache's own revalidation reaches the server.
                if asked.onlyIfCached { return hit(entry, age: answer.age, reason: "stale-while-revalidate (only-if-cached)", stale: true) }
                // Without a chain that can outlive the call, the answer is revalidated now instead.
                if await revalidateInBackground(entry) { return hit(entry, age: answer.age, reason: "stale-while-revalidate", stale: true) }
            }
        }
        if asked.onlyIfCached {
            miss(entry == nil ? "absent (only-if-cached)" : "not usable for the request (only-if-cached)")
            throw CurlewError(code: .cacheMiss, message: "no usable stored answer (the request said only-if-cached)", request: request.summary)
        }
        miss(entry == nil ? "absent" : "stale")
        do {
            return try await fetch(request, validating: entry, staleIfError: asked, next)
        } catch let error as CurlewError where Self.countsForStaleIfError(error) {
            if let entry, let stale = staleIfError(entry, asked: asked, failure: "\(error.code)") { return stale }
            throw error
        }
    }

    /// A failure `stale-if-error` covers (RFC 5861 §4): the origin could not be reached, or it
    /// answered `500`, `502`, `503` or `504` (a status the endpoint does not accept).
    private static func countsForStaleIfError(_ error: CurlewError) -> Bool {
        if FailoverMiddleware.isConnectLevel(error.code) { return true }
        guard error.code == .unacceptableStatus, let status = error.status else { return false }
        return HTTPCacheRules.staleIfErrorStatuses.contains(status.code)
    }

    /// `entry` served stale because its `stale-if-error` still covers it, `nil` when it does not.
    private func staleIfError(_ entry: CacheEntry, asked: HTTPCacheRules.Asked, failure: String) -> RawResponse? {
        let answer = HTTPCacheRules.StoredAnswer(entry, now: configuration.now())
        guard HTTPCacheRules.staleAllowed(by: .ifError, answer: answer, asked: asked, shared: configuration.isShared) else { return nil }
        return hit(entry, age: answer.age, reason: "stale-if-error (\(failure))", stale: true)
    }

    /// `stale-while-revalidate` (RFC 5861 §3): revalidates `entry` after this call has returned
    /// its stale answer, through the middleware inside the cache — one revalidation at a time per
    /// stored answer; a call that finds one running starts none. The call's deadline does not
    /// bind it. Its answer is stored (or its `304` refreshes the entry) as any fetch's; a failure
    /// is logged at debug level and leaves the entry as it was. `false` when the chain cannot
    /// outlive the call (a context made outside a client): the caller then revalidates at once.
    private func revalidateInBackground(_ entry: CacheEntry) async -> Bool {
        let cache = cache
        guard let inner = context.chain(after: { ($0 as? ResponseCache) === cache }) else { return false }
        guard await cache.beginBackgroundRevalidation(of: entry.key) else { return true }
        let call = self
        Task {
            // The call's deadline (`withDeadline`) budgets the call, which has its answer: the
            // revalidation that outlives it has only its own timeouts.
            await CallDeadline.$current.withValue(nil) {
                do {
                    _ = try await call.fetch(call.request, validating: entry, inner)
                } catch {
                    call.context.logger.debug("cache: \(call.request.summary) background revalidation failed: \(error)")
                }
            }
            await cache.endBackgroundRevalidation(of: entry.key)
        }
        return true
    }

    /// `networkFirst`: the answer from the network, or on a connection-level failure the stored
    /// answer ``offlineFallback(staleFor:failure:final:)`` allows.
    private func networkFirst(_ request: PreparedRequest, staleFor: CacheLifetime, _ next: MiddlewareNext) async throws -> RawResponse {
        do {
            return try await fetch(request, validating: nil, next)
        } catch let error as CurlewError where FailoverMiddleware.isConnectLevel(error.code) {
            if let fallback = await offlineFallback(staleFor: staleFor, failure: error) { return fallback }
            throw error
        }
    }

    /// A failure the transport's connect retries would have retried (``/CurlewCore/ConnectRetryPolicy``):
    /// refused or unreachable, or the TLS handshake failed; nothing was sent.
    private static func transportWouldRetry(_ error: CurlewError) -> Bool {
        error.code == .cannotConnect || error.code == .tlsFailure
    }

    /// The stored answer `networkFirst` serves when the origin cannot be reached: one stored
    /// within `staleFor`, and, when the server said `must-revalidate`, still fresh. `nil` (a miss
    /// reported when `final`) when there is none.
    private func offlineFallback(staleFor: CacheLifetime, failure: CurlewError, final: Bool = true) async -> RawResponse? {
        let now = configuration.now()
        guard let entry = await lookup(), now.timeIntervalSince(entry.storedAt) <= staleFor.seconds else {
            if final { miss("offline and nothing stored within \(staleFor)") }
            return nil
        }
        // `must-revalidate`: once stale, never served without the server's confirmation,
        // not even offline (RFC 9111 §5.2.2.2).
        let answer = HTTPCacheRules.StoredAnswer(entry, now: now)
        if HTTPCacheRules.forbidsStale(answer.facts, shared: configuration.isShared) {
            let lifetime = HTTPCacheRules.lifetime(of: entry, facts: answer.facts, shared: configuration.isShared, heuristic: true) ?? 0
            guard answer.age < lifetime else {
                if final { miss("offline, and the stored answer is stale and must-revalidate") }
                return nil
            }
        }
        return hit(entry, age: answer.age, reason: "offline fallback (\(failure.code))")
    }

    // MARK: Lookup

    /// The stored answer for this request's variant, `nil` when there is none.
    private func lookup() async -> CacheEntry? {
        let began = ContinuousClock.now
        guard let base = await cache.entry(for: key.full) else { return nil }
        guard !base.varyNames.isEmpty else { return base }
        guard !base.varyNames.contains("*") else { return nil }
        let tag = CacheKey.varyTag(names: base.varyNames, headers: request.headers)
        if base.varyTag == tag { return base }
        variantLookups?.record(key.variant(tag))
        guard let variant = await cache.entry(for: key.variant(tag), lookupBegan: began), variant.varyTag == tag else { return nil }
        return variant
    }

    /// `entry`'s current age when the policy finds it fresh, `nil` when it is stale.
    private func ageIfFresh(_ entry: CacheEntry, now: Date) -> Double? {
        switch policy {
        case .maxAge(let lifetime, overridingServer: false):
            // The app's lifetime is explicit: no heuristic lifetime may shorten it.
            let answer = HTTPCacheRules.StoredAnswer(entry, now: now)
            let serverLifetime = HTTPCacheRules.lifetime(of: entry, facts: answer.facts, shared: configuration.isShared, heuristic: false)
            return answer.age < min(lifetime.seconds, serverLifetime ?? lifetime.seconds) ? answer.age : nil
        case .maxAge(let lifetime, overridingServer: true):
            guard now.timeIntervalSince(entry.storedAt) < lifetime.seconds else { return nil }
            return HTTPCacheRules.currentAge(of: entry, now: now)
        default:
            return nil
        }
    }

    /// Serves `entry` without asking the server; `stale` marks it ``ResponseSource/stale``. Its
    /// `Age` is `age`, the entry's current age, replacing the stored one (RFC 9111 §4, §5.1).
    private func hit(_ entry: CacheEntry, age: Double, reason: String, stale: Bool = false) -> RawResponse {
        let source = stale ? ResponseSource.stale : ResponseSource.cache
        var raw = Self.response(from: entry, source: source.with(detail: entry.key, storedAt: entry.storedAt))
        raw.headers[.age] = String(Int(min(age, HTTPCacheRules.deltaSecondsCap)))
        cache.record { $0.hits += 1 }
        // The event reads the request alone: capturing `self` would copy this whole call.
        let request = request
        context.events.report(.cacheHit) { [source = raw.source] event in
            event.source = source
            event.reason = reason
            event.request = request.summary
        }
        return raw
    }

    private func miss(_ reason: String) {
        cache.record { $0.misses += 1 }
        let request = request
        context.events.report(.cacheMiss) { event in
            event.reason = reason
            event.request = request.summary
        }
    }

    // MARK: Network

    /// Sends the request (conditional when `entry` has validators), stores a storable answer,
    /// and turns a `304` into the refreshed stored answer.
    private func fetch(validating entry: CacheEntry?, _ next: MiddlewareNext) async throws -> RawResponse {
        try await fetch(request, validating: entry, next)
    }

    /// ``fetch(validating:_:)`` of `request` (this call's request with other transfer options).
    /// With `staleIfError`, a `500`, `502`, `503` or `504` answer the endpoint accepted is not
    /// stored when `entry`'s `stale-if-error` covers it: `entry` is served stale instead.
    private func fetch(
        _ request: PreparedRequest, validating entry: CacheEntry?, staleIfError asked: HTTPCacheRules.Asked? = nil, _ next: MiddlewareNext
    ) async throws -> RawResponse {
        var outgoing = request
        if let entry {
            if let tag = entry.headers.firstValue(.eTag) { outgoing.headers[.ifNoneMatch] = tag }
            if let modified = entry.headers.firstValue(.lastModified) { outgoing.headers[.ifModifiedSince] = modified }
        }
        let validating = outgoing.headers.contains(.ifNoneMatch) || outgoing.headers.contains(.ifModifiedSince)
        let sent = configuration.now()
        // A 304 answers the conditional request: it comes back as a response for this step to
        // turn into the stored answer, not as a status error.
        var attempt = context
        if validating, entry != nil { attempt.handledStatuses.insert(304) }
        // The redirects that led to the answer decide whether it may stand for this URL.
        let redirects = RedirectLog()
        attempt.redirectLog = redirects
        let raw = try await next(outgoing, attempt)
        if validating, raw.status.code == 304, let entry {
            // A 304 naming another entity tag than the stored one does not describe the stored
            // answer, which must not be refreshed from it (RFC 9111 §4.3.4): ask again, without
            // validators, for the current answer.
            guard HTTPCacheRules.sameEntity(stored: entry.headers.firstValue(.eTag), confirmed: raw.headers.firstValue(.eTag)) else {
                context.logger.debug("cache: \(request.summary) answered 304 with ETag \(raw.headers[.eTag] ?? ""), not the stored one; fetched again")
                return try await fetch(request, validating: nil, next)
            }
            return await revalidated(entry, with: raw, through: redirects.followed, sent: sent)
        }
        if let asked, let entry, HTTPCacheRules.staleIfErrorStatuses.contains(raw.status.code),
            let stale = staleIfError(entry, asked: asked, failure: "status \(raw.status.code)")
        {
            return stale
        }
        await store(raw, through: redirects.followed, sent: sent)
        return raw
    }

    /// The stored answer refreshed by a `304` (reached through `redirects`, if any), kept only if
    /// the `304` and the redirects still allow storing it. A mocked `304` or one that arrived
    /// after the account changed answers the call but leaves the stored answer as it was, as
    /// ``store(_:through:sent:)`` leaves out a mocked or outdated answer.
    private func revalidated(_ entry: CacheEntry, with answer: RawResponse, through redirects: [FollowedRedirect], sent: Date) async -> RawResponse {
        let headers = answer.headers
        let now = configuration.now()
        var refreshed = entry
        // Canonical names are lower-case already.
        let replaced = Set(headers.map(\.name.canonicalName)).subtracting(HTTPCacheRules.keptOn304)
        refreshed.headers.removeAll { replaced.contains($0.name.canonicalName) }
        refreshed.headers.append(contentsOf: headers.lazy.filter { replaced.contains($0.name.canonicalName) && $0.name != .setCookie })
        // The stored `Age` described the answer when it first arrived; the `304` is a new
        // arrival, as old as it says (none: as old as the exchange took).
        if !headers.contains(.age) { refreshed.headers.removeAll { $0.name == .age } }
        // Nor does the stored `Date`: a `304` without one is dated when it arrived (RFC 9110
        // §6.6.1), or the refreshed answer would be as old as the first and stale at once.
        if !headers.contains(.date) { refreshed.headers[.date] = CacheDateParser.format(now) }
        refreshed.requestTime = sent
        refreshed.storedAt = now
        refreshed.discardAfter = now.addingTimeInterval(configuration.retention.seconds)
        let scoped = account.scope != CacheKey.publicScope
        if answer.source == .mock {
            context.logger.debug("cache: \(request.summary) not refreshed (a mocked 304)")
        } else if !(await account.isUnchanged(configuration.credentials)) {
            context.logger.debug("cache: \(request.summary) not refreshed (the account changed during the exchange)")
        } else if HTTPCacheRules.refusal(response: headers, request: request.headers, shared: configuration.isShared, scoped: scoped) == nil,
            HTTPCacheRules.redirectRefusal(
                redirects, answer: refreshed.headers, request: request.headers, shared: configuration.isShared, scoped: scoped,
                http: policy == .http, now: now) == nil
        {
            await write(refreshed)
        } else {
            await cache.pending.submit(.remove, key: entry.key, logger: context.logger, summary: request.summary)
        }
        cache.record { $0.revalidations += 1 }
        let raw = Self.response(from: refreshed, source: ResponseSource.revalidated.with(detail: refreshed.key, storedAt: now))
        context.events.report(.cacheRevalidated) { event in
            event.source = raw.source
            event.request = request.summary
        }
        return raw
    }

    /// Stores an accepted answer (reached through `redirects`, if any) unless HTTP forbids it or
    /// the account changed meanwhile.
    private func store(_ raw: RawResponse, through redirects: [FollowedRedirect], sent: Date) async {
        // A range answer (206, or 416 to a resumed download's `Range`, added below the cache) is
        // not the resource: never stored under its plain key.
        guard raw.status.code != 206, raw.status.code != 304, raw.status.code != 416 else { return }
        let body: Data
        switch raw.content {
        case .data(let data):
            body = data
        case .file(let path, let length):
            // A download: read back when small enough to be an entry.
            guard let data = CacheDownload.storedBody(path: path, length: length, limit: configuration.maximumDownloadEntrySize) else {
                context.logger.debug("cache: \(request.summary) not stored (a download of \(length) bytes, above \(configuration.maximumDownloadEntrySize))")
                return
            }
            body = data
        case .stream:
            return
        }
        let scoped = account.scope != CacheKey.publicScope
        if let refusal = HTTPCacheRules.refusal(response: raw.headers, request: request.headers, shared: configuration.isShared, scoped: scoped) {
            context.logger.debug("cache: \(request.summary) not stored (\(refusal))")
            return
        }
        if let refusal = HTTPCacheRules.redirectRefusal(
            redirects, answer: raw.headers, request: request.headers, shared: configuration.isShared, scoped: scoped,
            http: policy == .http, now: sent)
        {
            context.logger.debug("cache: \(request.summary) not stored (\(refusal))")
            return
        }
        // HTTP caching stores only what RFC 9111 §3 lets a cache store; the app's own policies
        // (`.maxAge`, `.writeOnly`, `.networkFirst`…) store every accepted answer.
        if policy == .http,
            let reason = HTTPCacheRules.unpermitted(status: raw.status.code, response: raw.headers, shared: configuration.isShared, scoped: scoped)
        {
            context.logger.debug("cache: \(request.summary) not stored (\(reason))")
            return
        }
        // A mock's or fixture's answer is never stored: switching mocks on for one call must not
        // leave fabricated bytes behind for later real calls.
        guard raw.source != .mock else {
            context.logger.debug("cache: \(request.summary) not stored (a mocked answer)")
            return
        }
        guard await account.isUnchanged(configuration.credentials) else {
            context.logger.debug("cache: \(request.summary) not stored (the account changed during the exchange)")
            return
        }
        let names = HTTPCacheRules.varyNames(raw.headers)
        // A cookie jar's cookies are added by libcurl, below the cache, which never sees them:
        // an answer that varies on them cannot be told apart from another session's.
        if names.contains("cookie"), request.options.connection.cookies != nil, !request.headers.contains(.cookie) {
            context.logger.debug("cache: \(request.summary) not stored (Vary: Cookie, and the cookie jar's cookies are added below the cache)")
            return
        }
        let now = configuration.now()
        let tag = names.isEmpty ? nil : CacheKey.varyTag(names: names, headers: request.headers)
        var headers = HTTPFields(raw.headers.lazy.filter { $0.name != .setCookie })
        // An answer without `Date` is dated when it arrived (RFC 9110 §6.6.1: a cache adds one),
        // so a hit served from it later says when it was made, as its `Age` does.
        if !headers.contains(.date) { headers[.date] = CacheDateParser.format(now) }
        let entry = CacheEntry(
            key: key.full, status: raw.status.code,
            headers: headers,
            body: body, url: raw.url, requestTime: sent, storedAt: now, varyNames: names, varyTag: tag,
            discardAfter: now.addingTimeInterval(configuration.retention.seconds))
        await write(entry)
        if let tag {
            var variant = entry
            variant.key = key.variant(tag)
            await write(variant)
        }
        cache.record { $0.stores += 1 }
        context.events.report(.cacheStored) { event in
            event.source = ResponseSource.cache.with(detail: entry.key, storedAt: now)
            event.request = request.summary
        }
    }

    /// Hands an entry to the cache's pending writes: visible to lookups at once, written after
    /// the call returns; a failure is logged at debug level and counted, never thrown.
    private func write(_ entry: CacheEntry) async {
        await cache.pending.submit(.store(entry), key: entry.key, logger: context.logger, summary: request.summary)
    }

    static func response(from entry: CacheEntry, source: ResponseSource) -> RawResponse {
        RawResponse(status: HTTPResponse.Status(code: entry.status), headers: entry.headers, body: entry.body, url: entry.url, source: source)
    }
}
