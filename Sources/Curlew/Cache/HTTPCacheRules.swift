internal import Foundation
internal import HTTPTypes

/// RFC 9111 arithmetic: `Cache-Control` directives, storability, freshness lifetime and current
/// age. A `Date` header is used only to measure how old the answer was when it arrived (never
/// below zero), so a server clock in the future cannot make an answer fresh for longer.
///
/// A ``ResponseCache`` is a private cache unless ``ResponseCache/Configuration/isShared``:
/// then `s-maxage` and `proxy-revalidate` are ignored (they address shared caches) and
/// `private` answers are stored.
enum HTTPCacheRules {
    /// The freshness facts of one stored answer, read in one pass over its headers (a hit reads
    /// each header once instead of searching the list per rule).
    struct Facts {
        /// `Cache-Control` directives: lower-cased names, unquoted arguments.
        var control: [String: String] = [:]
        /// `Date`, when present and valid.
        var date: Date?
        /// `Age` in seconds, when present and a number.
        var age: Double?
        /// Whether an `Expires` header is present (an invalid one means "already expired").
        var hasExpires = false
        /// `Expires`, when valid.
        var expires: Date?
        /// `Last-Modified`, when valid.
        var lastModified: Date?

        init(_ entry: CacheEntry) {
            self.init(entry.headers)
        }

        init(_ headers: HTTPFields) {
            var cacheControl: String?
            for header in headers {
                switch header.name {
                case .age:
                    if age == nil { age = HTTPCacheRules.ageSeconds(header.value) }
                case .date:
                    if date == nil { date = CacheDateParser.parse(header.value) }
                case .expires:
                    if !hasExpires {
                        hasExpires = true
                        expires = CacheDateParser.parse(header.value)
                    }
                case .cacheControl:
                    cacheControl = cacheControl.map { $0 + "," + header.value } ?? header.value
                case .lastModified:
                    if lastModified == nil { lastModified = CacheDateParser.parse(header.value) }
                default:
                    break
                }
            }
            control = HTTPCacheRules.directives(cacheControl)
        }
    }

    /// A stored answer as the rules read it at one moment: its ``Facts`` and its current age,
    /// read once per lookup, then asked by every rule and by the hit's `Age`.
    struct StoredAnswer {
        /// The stored answer.
        let entry: CacheEntry
        /// Its freshness facts.
        let facts: Facts
        /// Its current age in seconds at the moment it was read (RFC 9111 §4.2.3).
        let age: Double

        init(_ entry: CacheEntry, now: Date) {
            self.entry = entry
            facts = Facts(entry)
            age = HTTPCacheRules.currentAge(of: entry, facts: facts, now: now)
        }
    }

    /// What a request's own `Cache-Control` asks of the cache (RFC 9111 §5.2.1); every field is
    /// empty for a request without one.
    struct Asked {
        /// `no-cache`, or `max-age=0`: the server must be asked.
        var noCache = false
        /// `max-age=N` with N > 0: nothing older than N seconds.
        var maxAge: Double?
        /// `min-fresh=N`: fresh for at least N more seconds.
        var minFresh: Double?
        /// `max-stale[=N]`: stale by at most N seconds (`infinity` without a value).
        var maxStale: Double?
        /// `only-if-cached`: never ask the server.
        var onlyIfCached = false
        /// `stale-if-error=N` (RFC 5861 §4): when the server fails, a stale answer up to N
        /// seconds past its lifetime will do.
        var staleIfError: Double?

        init(_ headers: HTTPFields) {
            guard headers.contains(.cacheControl) else { return }
            let control = HTTPCacheRules.directives(HTTPCacheRules.joined(headers, .cacheControl))
            let maxAge = control["max-age"].flatMap(HTTPCacheRules.deltaSeconds)
            noCache = control["no-cache"] != nil || maxAge == 0
            self.maxAge = maxAge == 0 ? nil : maxAge
            minFresh = control["min-fresh"].flatMap(HTTPCacheRules.deltaSeconds)
            // A bare `max-stale` accepts any staleness; a value that is not delta-seconds
            // accepts none rather than whatever a number parser reads into it.
            maxStale = control["max-stale"].map { $0.isEmpty ? .infinity : HTTPCacheRules.deltaSeconds($0) ?? 0 }
            onlyIfCached = control["only-if-cached"] != nil
            staleIfError = control["stale-if-error"].flatMap(HTTPCacheRules.deltaSeconds)
        }
    }

    /// How a stored answer may be used for a request, by ``usability(of:asked:shared:)``.
    enum Usability: Equatable {
        /// Fresh enough for the request: served as is.
        case fresh
        /// Stale, and the request's `max-stale` accepts it.
        case staleAccepted
        /// Not without the server: revalidate or fetch.
        case unusable
    }

    /// Whether `entry` may answer a request asking `asked` under HTTP caching (RFC 9111 §4.2,
    /// §5.2.1): its age must not pass the request's `max-age`; it must be fresh for the request's
    /// `min-fresh` more seconds, or stale by at most its `max-stale` — and a stale answer is never
    /// used when the server said `no-cache` or `must-revalidate` (§4.2.4), nor when the request
    /// said `no-cache`.
    static func usability(of answer: StoredAnswer, asked: Asked, shared: Bool) -> Usability {
        guard !asked.noCache else { return .unusable }
        let lifetime = lifetime(of: answer.entry, facts: answer.facts, shared: shared, heuristic: true) ?? 0
        if let maxAge = asked.maxAge, answer.age > maxAge { return .unusable }
        // `min-fresh` asks for an answer that stays fresh that much longer: it counts as age.
        let wantedAge = answer.age + (asked.minFresh ?? 0)
        if wantedAge < lifetime { return .fresh }
        guard let maxStale = asked.maxStale, mayServeStale(answer.facts, shared: shared), wantedAge - lifetime <= maxStale else {
            return .unusable
        }
        return .staleAccepted
    }

    /// Statuses that count as an error for `stale-if-error` (RFC 5861 §4).
    static let staleIfErrorStatuses: Set<Int> = [500, 502, 503, 504]

    /// The RFC 5861 extensions that let a stale answer be served.
    enum StaleExtension: String {
        /// `stale-while-revalidate=N` (§3): while the cache revalidates in the background.
        case whileRevalidate = "stale-while-revalidate"
        /// `stale-if-error=N` (§4): when the server fails.
        case ifError = "stale-if-error"
    }

    /// Whether `staleExtension` lets `answer` answer a request asking `asked` now: stale by at
    /// most N seconds (the request's `min-fresh` counting as age), no older than the request's
    /// `max-age`, never when the request said `no-cache` or the server `no-cache` or
    /// `must-revalidate`. N is the server's; for `stale-if-error` the request may give one too
    /// (RFC 5861 §4), and the larger counts.
    static func staleAllowed(by staleExtension: StaleExtension, answer: StoredAnswer, asked: Asked, shared: Bool) -> Bool {
        guard !asked.noCache else { return false }
        let facts = answer.facts
        var window = facts.control[staleExtension.rawValue].flatMap(deltaSeconds)
        if staleExtension == .ifError, let requested = asked.staleIfError { window = max(window ?? 0, requested) }
        guard mayServeStale(facts, shared: shared), let window else { return false }
        let lifetime = lifetime(of: answer.entry, facts: facts, shared: shared, heuristic: true) ?? 0
        if let maxAge = asked.maxAge, answer.age > maxAge { return false }
        return answer.age + (asked.minFresh ?? 0) - lifetime <= window
    }

    /// Whether the server lets a stale answer be served at all: not when it said `no-cache`
    /// (§5.2.2.4) or one of the directives of ``forbidsStale(_:shared:)``.
    static func mayServeStale(_ facts: Facts, shared: Bool) -> Bool {
        facts.control["no-cache"] == nil && !forbidsStale(facts, shared: shared)
    }

    /// Statuses a cache may give a heuristic lifetime (RFC 9110 §15.1 "heuristically cacheable").
    static let heuristicallyCacheable: Set<Int> = [200, 203, 204, 206, 300, 301, 308, 404, 405, 410, 414, 501]
    /// The share of the time since `Last-Modified` a heuristic lifetime gets (RFC 9111 §4.2.2).
    static let heuristicFraction = 0.1
    /// The longest heuristic lifetime: a day.
    static let heuristicCap: Double = 86_400

    /// Directives of `Cache-Control` values, lower-cased names, unquoted values. A directive
    /// given twice keeps its first value (RFC 9111 §4.2.1: "the first occurrence should be used").
    static func directives(_ value: String?) -> [String: String] {
        guard let value else { return [:] }
        var result: [String: String] = [:]
        for part in value.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard let first = pair.first else { continue }
            let name = trimmed(first).lowercased()
            guard !name.isEmpty else { continue }
            var argument = pair.count > 1 ? trimmed(pair[1]) : ""
            while argument.first == "\"" { argument = argument.dropFirst() }
            while argument.last == "\"" { argument = argument.dropLast() }
            if result[name] == nil { result[name] = String(argument) }
        }
        return result
    }

    /// A `delta-seconds` value (RFC 9111 §1.2.2): digits only, capped at 2³¹ seconds; `nil` for
    /// anything else (`inf`, `1e9`, `-5`, `0x10`, `60s`), which a lifetime treats as
    /// already stale rather than as a number `Double` happens to read.
    static func deltaSeconds(_ text: some StringProtocol) -> Double? {
        guard !text.isEmpty else { return nil }
        var value: Double = 0
        for byte in text.utf8 {
            guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
            value = min(deltaSecondsCap, value * 10 + Double(byte - UInt8(ascii: "0")))
        }
        return value
    }

    /// The largest `delta-seconds` a cache need handle; larger values count as this one.
    static let deltaSecondsCap: Double = 2_147_483_648

    /// `text` without leading and trailing spaces and tabs.
    /// An `Age` value's seconds. A list (`3600, 3600`: a proxy appended its own) is read by its
    /// first member (RFC 9111 §5.1), not dropped — a dropped age made a stale answer fresh.
    static func ageSeconds(_ value: String) -> Double? {
        let first = value.utf8.firstIndex(of: UInt8(ascii: ",")).map { value[..<$0] } ?? Substring(value)
        return deltaSeconds(trimmed(first))
    }

    static func trimmed(_ text: Substring) -> Substring {
        var text = text
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return text
    }

    /// Why a response must not be stored, or `nil` when it may be.
    static func refusal(response: HTTPFields, request: HTTPFields, shared: Bool, scoped: Bool) -> String? {
        let responseDirectives = directives(joined(response, .cacheControl))
        if responseDirectives["no-store"] != nil { return "no-store" }
        if directives(joined(request, .cacheControl))["no-store"] != nil { return "request no-store" }
        if varyNames(response).contains("*") { return "Vary: *" }
        if shared, !scoped, responseDirectives["private"] != nil { return "private" }
        return nil
    }

    /// Why an answer reached through `redirects` must not be stored under the URL first asked, or
    /// `nil` when it may. It stands for that URL only while each redirect could be remembered
    /// too: none refused (``refusal(response:request:shared:scoped:)``), and under
    /// ``CachePolicy/http`` each one permanent (301, 308) and without `no-cache`. A temporary
    /// redirect (302, 303, 307) lets the server send the next call elsewhere, so its answer is
    /// not the first URL's. A permanent redirect with a lifetime of its own shorter than the
    /// answer's (`max-age=0`, a past `Expires`) would outlive itself in the answer's entry, so
    /// the answer is not stored either. The app's own policies store through temporary redirects
    /// too.
    static func redirectRefusal(
        _ redirects: [FollowedRedirect], answer: HTTPFields, request: HTTPFields, shared: Bool, scoped: Bool, http: Bool, now: Date
    ) -> String? {
        guard !redirects.isEmpty else { return nil }
        let answerLifetime = http ? explicitLifetime(Facts(answer), shared: shared, arrival: now) ?? .infinity : .infinity
        for redirect in redirects {
            if let refusal = refusal(response: redirect.headers, request: request, shared: shared, scoped: scoped) {
                return "its \(redirect.status) redirect says \(refusal)"
            }
            guard http else { continue }
            guard redirect.status == 301 || redirect.status == 308 else {
                return "reached through a temporary \(redirect.status) redirect"
            }
            if directives(joined(redirect.headers, .cacheControl))["no-cache"] != nil {
                return "its \(redirect.status) redirect says no-cache"
            }
            if let lifetime = explicitLifetime(Facts(redirect.headers), shared: shared, arrival: now), lifetime < answerLifetime {
                return "its \(redirect.status) redirect is fresh for \(Int(lifetime)) s, less than the answer"
            }
        }
        return nil
    }

    /// Why ``CachePolicy/http`` must not store an answer that the other rules allow, or `nil`
    /// when it may (RFC 9111 §3): the answer needs an explicit lifetime (`max-age`, `Expires`,
    /// `s-maxage` in a shared cache), a `public` or `private` directive (`private` only where
    /// ``refusal(response:request:shared:scoped:)`` lets it be stored), or a heuristically
    /// cacheable status. A `201` or a `500` with none of these is not stored.
    static func unpermitted(status: Int, response: HTTPFields, shared: Bool, scoped: Bool) -> String? {
        if heuristicallyCacheable.contains(status) { return nil }
        let control = directives(joined(response, .cacheControl))
        if control["max-age"] != nil || control["public"] != nil || response[.expires] != nil { return nil }
        if shared, control["s-maxage"] != nil { return nil }
        if control["private"] != nil, !shared || scoped { return nil }
        return "status \(status) is not heuristically cacheable and has no explicit lifetime"
    }

    /// The lower-cased header names of `Vary`.
    static func varyNames(_ headers: HTTPFields) -> [String] {
        headers[values: .vary].flatMap { $0.split(separator: ",") }
            .map { trimmed($0).lowercased() }
            .filter { !$0.isEmpty }
    }

    /// The freshness lifetime in seconds (RFC 9111 §4.2.1): 0 for `no-cache` (always
    /// revalidate); then `s-maxage` (shared caches only), `max-age`, `Expires` minus `Date`;
    /// then, when `heuristic` and the server gave no explicit lifetime, 10 % of the time since
    /// `Last-Modified` (at most a day) for heuristically cacheable statuses or `public` answers
    /// (§4.2.2); `nil` when there is none.
    static func lifetime(of entry: CacheEntry, facts: Facts, shared: Bool, heuristic: Bool) -> Double? {
        if let explicit = explicitLifetime(facts, shared: shared, arrival: entry.storedAt) { return explicit }
        guard heuristic, heuristicallyCacheable.contains(entry.status) || facts.control["public"] != nil,
            let modified = facts.lastModified
        else { return nil }
        // Measured from the server's `Date`, but never from later than the arrival: a `Date` in
        // the future cannot lengthen the heuristic lifetime.
        let reference = min(facts.date ?? entry.storedAt, entry.storedAt)
        return min(heuristicCap, max(0, reference.timeIntervalSince(modified)) * heuristicFraction)
    }

    /// The lifetime the headers give explicitly: 0 for `no-cache`, then `s-maxage` (shared
    /// caches only), `max-age`, `Expires` minus `Date` (`arrival` when there is no `Date`; an
    /// invalid `Expires` is 0); `nil` when they give none.
    static func explicitLifetime(_ facts: Facts, shared: Bool, arrival: Date) -> Double? {
        let control = facts.control
        if control["no-cache"] != nil { return 0 }
        if shared, let sharedMaxAge = control["s-maxage"] { return deltaSeconds(sharedMaxAge) ?? 0 }
        if let maxAge = control["max-age"] { return deltaSeconds(maxAge) ?? 0 }
        guard facts.hasExpires else { return nil }
        guard let expiry = facts.expires else { return 0 }
        return max(0, expiry.timeIntervalSince(facts.date ?? arrival))
    }

    /// Whether a stale answer must not be served without the server's confirmation, even by an
    /// offline fallback: `must-revalidate` (RFC 9111 §5.2.2.2), and `proxy-revalidate` or
    /// `s-maxage` in a shared cache.
    static func forbidsStale(_ facts: Facts, shared: Bool) -> Bool {
        let control = facts.control
        return control["must-revalidate"] != nil || (shared && (control["proxy-revalidate"] != nil || control["s-maxage"] != nil))
    }

    /// The answer's current age in seconds (RFC 9111 §4.2.3).
    static func currentAge(of entry: CacheEntry, facts: Facts, now: Date) -> Double {
        currentAge(of: entry, date: facts.date, age: facts.age, now: now)
    }

    /// The answer's current age in seconds, reading only its `Date` and `Age`: for a policy that
    /// serves it without reading the directives ``Facts`` also reads.
    static func currentAge(of entry: CacheEntry, now: Date) -> Double {
        var date: Date?
        var age: Double?
        for header in entry.headers {
            if header.name == .age {
                if age == nil { age = ageSeconds(header.value) }
            } else if header.name == .date, date == nil {
                date = CacheDateParser.parse(header.value)
            }
        }
        return currentAge(of: entry, date: date, age: age, now: now)
    }

    /// RFC 9111 §4.2.3 from the answer's `Date` and `Age`.
    private static func currentAge(of entry: CacheEntry, date: Date?, age: Double?, now: Date) -> Double {
        let apparentAge = date.map { max(0, entry.storedAt.timeIntervalSince($0)) } ?? 0
        let responseDelay = max(0, entry.storedAt.timeIntervalSince(entry.requestTime))
        let initialAge = max(apparentAge, (age ?? 0) + responseDelay)
        return initialAge + max(0, now.timeIntervalSince(entry.storedAt))
    }

    /// Whether a `304`'s entity tag can confirm the stored answer's (RFC 9111 §4.3.4): when both
    /// have one, their opaque tags are the same (the weak comparison: `W/"a"` matches `"a"`); a
    /// `304` without one always can. A strong tag identifies the representation it confirms: one
    /// answering a stored answer without a tag (validated by date) names another representation,
    /// which must not refresh it; a weak one still can.
    static func sameEntity(stored: String?, confirmed: String?) -> Bool {
        guard let confirmed else { return true }
        guard let stored else { return trimmed(Substring(confirmed)).hasPrefix("W/") }
        return opaqueTag(stored) == opaqueTag(confirmed)
    }

    /// An entity tag without its weakness prefix and surrounding white space (spaces and tabs,
    /// HTTP's; not Foundation's Unicode `whitespaces`, whose trimming costs more than the rest of
    /// a revalidation's cache work).
    private static func opaqueTag(_ tag: String) -> Substring {
        let trimmed = trimmed(Substring(tag))
        return trimmed.hasPrefix("W/") ? trimmed.dropFirst(2) : trimmed
    }

    /// Headers a `304` must not replace.
    static let keptOn304: Set<String> = ["content-length", "content-encoding", "content-range", "transfer-encoding", "content-type"]

    static func joined(_ headers: HTTPFields, _ name: HTTPField.Name) -> String? {
        let values = headers[values: name]
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }
}
