internal import Foundation
internal import HTTPTypes

/// RFC 9111 arithmetic: `Cache-Control` directives, storability, freshness lifetime and current
/// age. A `Date` header is used only to measure how old the answer was when it arrived (never
/// below zero), so a server clock in the future cannot make an answer fresh for longer.
enum HTTPCacheRules {
    /// Directives of `Cache-Control` values, lower-cased names, unquoted values.
    static func directives(_ value: String?) -> [String: String] {
        guard let value else { return [:] }
        var result: [String: String] = [:]
        for part in value.split(separator: ",") {
            let pair = part.split(separator: "=", maxSplits: 1)
            guard let name = pair.first?.trimmingCharacters(in: .whitespaces).lowercased(), !name.isEmpty else { continue }
            let argument = pair.count > 1 ? pair[1].trimmingCharacters(in: .whitespaces).trimmingCharacters(in: CharacterSet(charactersIn: "\"")) : ""
            result[name] = argument
        }
        return result
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

    /// The lower-cased header names of `Vary`.
    static func varyNames(_ headers: HTTPFields) -> [String] {
        headers[values: .vary].flatMap { $0.split(separator: ",") }
            .map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            .filter { !$0.isEmpty }
    }

    /// The server's freshness lifetime in seconds: 0 for `no-cache` (always revalidate), then
    /// `max-age`, then `Expires` minus `Date`; `nil` when the server gave none.
    static func lifetime(of entry: CacheEntry) -> Double? {
        let control = directives(entry.joinedHeader("Cache-Control"))
        if control["no-cache"] != nil { return 0 }
        if let maxAge = control["max-age"] { return Double(maxAge).map { max(0, $0) } ?? 0 }
        guard let expires = entry.header("Expires") else { return nil }
        guard let expiry = ServerClock.parseHTTPDate(expires) else { return 0 }
        let base = entry.header("Date").flatMap(ServerClock.parseHTTPDate) ?? entry.storedAt
        return max(0, expiry.timeIntervalSince(base))
    }

    /// Whether the server demands revalidation once stale (`must-revalidate`, `no-cache`).
    static func mustRevalidate(_ entry: CacheEntry) -> Bool {
        let control = directives(entry.joinedHeader("Cache-Control"))
        return control["must-revalidate"] != nil || control["no-cache"] != nil
    }

    /// The answer's current age in seconds (RFC 9111 §4.2.3).
    static func currentAge(of entry: CacheEntry, now: Date) -> Double {
        let apparentAge = entry.header("Date").flatMap(ServerClock.parseHTTPDate).map { max(0, entry.storedAt.timeIntervalSince($0)) } ?? 0
        let ageValue = entry.header("Age").flatMap { Double($0.trimmingCharacters(in: .whitespaces)) }.map { max(0, $0) } ?? 0
        let responseDelay = max(0, entry.storedAt.timeIntervalSince(entry.requestTime))
        let initialAge = max(apparentAge, ageValue + responseDelay)
        return initialAge + max(0, now.timeIntervalSince(entry.storedAt))
    }

    /// Headers a `304` must not replace.
    static let keptOn304: Set<String> = ["content-length", "content-encoding", "content-range", "transfer-encoding", "content-type"]

    static func joined(_ headers: HTTPFields, _ name: HTTPField.Name) -> String? {
        let values = headers[values: name]
        return values.isEmpty ? nil : values.joined(separator: ", ")
    }
}
