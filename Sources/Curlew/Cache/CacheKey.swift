internal import Foundation
internal import HTTPTypes

/// The parts of a full cache key, `"<version>|<scope>|<request>"`:
///
/// - version: ``ResponseCache/Configuration/version`` (a new version misses every old entry), plus
///   `/` and ``RequestOptions/cacheVersion`` when the call has one;
/// - scope: `public`, or `a:<digest of the account>` and/or `h:<digest of Authorization/Cookie>`;
/// - request: ``RequestOptions/cacheKey`` or `METHOD URL` without volatile parameters, query
///   sorted, plus ` sha256:<body digest>`; then ` +<digest>` of ``RequestOptions/cacheKeySuffix``;
///   a variant adds `|vary:<digest>`.
///
/// `package`: a second tier (CurlewFleet) files and invalidates entries by these parts.
package struct CacheKey: Sendable, Hashable {
    package var version: String
    package var scope: String
    package var request: String

    static let publicScope = "public"

    /// The full key.
    package var full: String { "\(version)|\(scope)|\(request)" }

    /// The key of the variant of this request with the given `Vary` digest.
    func variant(_ tag: String) -> String { full + "|vary:" + tag }

    /// The request part from the identity computed before any middleware.
    static func requestPart(identity: RequestIdentity, options: RequestOptions, volatileParameters: Set<String>) -> String {
        let part: String
        if let custom = options.cacheKey {
            part = custom
        } else {
            let url = RequestIdentity.removing(volatileParameters.union(options.volatileParameters), from: identity.url)
            part = identity.bodyDigest.map { "\(identity.method) \(url) sha256:\($0)" } ?? "\(identity.method) \(url)"
        }
        guard let suffix = options.cacheKeySuffix else { return part }
        return part + " +" + CacheDigest.sha256("curlew.cache.suffix\u{0}" + suffix).prefix(32)
    }

    /// The version part: the cache's, and the call's own (``RequestOptions/cacheVersion``) after it.
    static func versionPart(cache version: String, options: RequestOptions) -> String {
        guard let own = options.cacheVersion else { return version }
        return version + "/" + own.replacingOccurrences(of: "|", with: "%7C")
    }

    /// The scope part for an account.
    package static func accountScope(_ identity: String) -> String {
        "a:" + CacheDigest.sha256("curlew.cache.account\u{0}" + identity)
    }

    /// Splits a full key into version, scope and request part.
    package static func parse(_ full: String) -> CacheKey? {
        let parts = full.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3 else { return nil }
        return CacheKey(version: String(parts[0]), scope: String(parts[1]), request: String(parts[2]))
    }

    /// The request part without a variant suffix.
    package var requestWithoutVariant: String {
        guard let range = request.range(of: "|vary:", options: .backwards) else { return request }
        return String(request[..<range.lowerBound])
    }

    /// A digest of the request's values for the `Vary` names (lower-cased, sorted).
    static func varyTag(names: [String], headers: HTTPFields) -> String {
        var text = ""
        for name in names.sorted() {
            let value = HTTPField.Name(name).map { headers[values: $0].joined(separator: ", ") }
            text += name + ":" + (value.flatMap { $0.isEmpty ? nil : $0 } ?? "\u{0}absent") + "\n"
        }
        return String(CacheDigest.sha256(text).prefix(32))
    }
}
