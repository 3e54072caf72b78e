internal import Curlew
internal import Foundation

/// How ``FleetCacheStorage`` files a ``ResponseCache`` entry in a ``FleetStore`` and turns the
/// cache's invalidations into the store's.
///
/// The cache's full key is `version|scope|request`; the fleet key puts the request part first,
/// `request␟scope␟version` (U+001F), so a ``CacheInvalidation/keyPrefix(_:)`` (a prefix of the
/// request part, every scope) is a prefix of fleet keys. Each entry carries the tags
/// `r:<request part without variant>` (for ``CacheInvalidation/request(_:)``) and its account
/// scope `a:<digest>` (for ``CacheInvalidation/account(_:)``). The scope stays in the key, so
/// credential isolation and `Vary` variants are exactly the first tier's.
enum FleetKeys {
    static let separator = "\u{1F}"

    /// The fleet key and tags of a full cache key.
    static func describe(_ full: String) -> (key: String, tags: [String]) {
        guard let parts = CacheKey.parse(full) else { return (full, []) }
        var tags = ["r:" + parts.requestWithoutVariant]
        for scope in parts.scope.split(separator: ";") where scope.hasPrefix("a:") {
            tags.append(String(scope))
        }
        return (parts.request + separator + parts.scope + separator + parts.version, tags)
    }

    /// The store's invalidation for a cache invalidation.
    static func invalidation(for target: CacheInvalidation) -> FleetInvalidation {
        switch target {
        case .request(let request): .tag("r:" + request)
        case .keyPrefix(let prefix): .prefix(prefix)
        case .account(let identity): .tag(CacheKey.accountScope(identity))
        case .all: .all
        }
    }

    /// Whether a full cache key is a `GET`, the only requests the fleet fetches once.
    static func isGet(_ full: String) -> Bool {
        CacheKey.parse(full)?.request.hasPrefix("GET ") ?? false
    }
}

/// A ``CacheEntry`` as a ``FleetEntry`` payload: a 4-byte big-endian length, the entry without
/// its body as JSON, then the body bytes as they are (no base64 on the hot path).
enum FleetEntryCoding {
    static func encode(_ entry: CacheEntry) throws -> FleetEntry {
        var meta = entry
        meta.body = Data()
        let json = try JSONEncoder().encode(meta)
        var payload = Data(capacity: 4 + json.count + entry.body.count)
        let length = UInt32(json.count)
        payload.append(contentsOf: [UInt8(length >> 24 & 0xFF), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)])
        payload.append(json)
        payload.append(entry.body)
        let described = FleetKeys.describe(entry.key)
        return FleetEntry(
            key: described.key, tags: described.tags, etag: entry.header("ETag"), lastModified: entry.header("Last-Modified"),
            expiresAt: entry.discardAfter, payload: payload)
    }

    /// The entry, or `nil` for damaged bytes or an entry stored under another full key.
    static func decode(_ stored: FleetEntry, expectedKey: String) -> CacheEntry? {
        let bytes = [UInt8](stored.payload.prefix(4))
        guard bytes.count == 4 else { return nil }
        let length = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        let start = stored.payload.startIndex + 4
        guard length >= 0, stored.payload.count - 4 >= length else { return nil }
        let json = stored.payload[start..<(start + length)]
        guard var entry = try? JSONDecoder().decode(CacheEntry.self, from: json), entry.key == expectedKey else { return nil }
        entry.body = Data(stored.payload[(start + length)...])
        return entry
    }
}
