internal import Curlew
internal import Foundation
internal import HTTPTypes

/// How ``FleetCacheStorage`` files a ``/Curlew/ResponseCache`` entry in a ``FleetStore`` and turns the
/// cache's invalidations into the store's.
///
/// The cache's full key is `version|scope|request`; the fleet key puts the request part first,
/// `request␟scope␟version` (U+001F), so a ``/Curlew/CacheInvalidation/keyPrefix(_:)`` (a prefix of the
/// request part, every scope) is a prefix of fleet keys. Each entry carries the tags
/// `r:<request part without variant>` (for ``/Curlew/CacheInvalidation/request(_:)``) and its account
/// scope `a:<digest>` (for ``/Curlew/CacheInvalidation/account(_:)``). The scope stays in the key, so
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

/// A ``/Curlew/CacheEntry`` as a ``FleetEntry`` payload: the format byte `0xC1`, the entry without its
/// body in a compact binary form (``FleetEntryBytes``), then the body bytes as they are. A
/// second-tier hit decodes it on the request path: JSONDecoder took a fifth of a hit's CPU.
///
/// Payloads of the first format (a 4-byte big-endian length, the entry without its body as
/// JSON, the body) are still read, so instances of both versions can share a store during a
/// rolling upgrade (an instance of the first version reads a payload of this one as damaged: a
/// miss). Its length cannot begin with `0xC1` (that would be a JSON part over 3 GB).
enum FleetEntryCoding {
    static let format: UInt8 = 0xC1

    static func encode(_ entry: CacheEntry) throws -> FleetEntry {
        var writer = FleetEntryBytes.Writer()
        writer.bytes.reserveCapacity(256 + entry.key.utf8.count + entry.url.utf8.count + entry.body.count)
        writer.bytes.append(format)
        writer.string(entry.key)
        writer.integer(UInt64(UInt32(truncatingIfNeeded: entry.status)))
        writer.integer(UInt64(entry.headers.count))
        for header in entry.headers {
            writer.string(header.name.rawName)
            writer.string(header.value)
        }
        writer.string(entry.url)
        writer.date(entry.requestTime)
        writer.date(entry.storedAt)
        writer.integer(UInt64(entry.varyNames.count))
        for name in entry.varyNames { writer.string(name) }
        writer.optionalString(entry.varyTag)
        writer.optionalDate(entry.discardAfter)
        var payload = Data(writer.bytes)
        payload.append(entry.body)
        let described = FleetKeys.describe(entry.key)
        return FleetEntry(
            key: described.key, tags: described.tags, etag: entry.headers[.eTag], lastModified: entry.headers[.lastModified],
            expiresAt: entry.discardAfter, payload: payload, requestedAt: entry.requestTime)
    }

    /// The entry, or `nil` for damaged bytes or an entry stored under another full key.
    static func decode(_ stored: FleetEntry, expectedKey: String) -> CacheEntry? {
        guard let first = stored.payload.first else { return nil }
        guard first == format else { return decodeJSON(stored, expectedKey: expectedKey) }
        return stored.payload.withUnsafeBytes { raw -> CacheEntry? in
            var reader = FleetEntryBytes.Reader(bytes: raw, offset: 1)
            guard let key = reader.string(), key == expectedKey, let status = reader.integer().flatMap({ Int(exactly: $0) }), let headerCount = reader.count() else {
                return nil
            }
            var headers = HTTPFields()
            headers.reserveCapacity(headerCount)
            for _ in 0..<headerCount {
                guard let name = reader.string().flatMap({ HTTPField.Name($0) }), let value = reader.string() else { return nil }
                headers.append(HTTPField(name: name, value: value))
            }
            guard let url = reader.string(), let requestTime = reader.date(), let storedAt = reader.date(), let varyCount = reader.count() else { return nil }
            var varyNames: [String] = []
            for _ in 0..<varyCount {
                guard let name = reader.string() else { return nil }
                varyNames.append(name)
            }
            guard let varyTag = reader.optionalString(), let discardAfter = reader.optionalDate() else { return nil }
            let body = Data(raw[reader.offset...])
            return CacheEntry(
                key: key, status: status, headers: headers, body: body, url: url, requestTime: requestTime, storedAt: storedAt,
                varyNames: varyNames, varyTag: varyTag, discardAfter: discardAfter)
        }
    }

    /// The first format: a 4-byte big-endian length, the entry without its body as JSON, the body.
    static func decodeJSON(_ stored: FleetEntry, expectedKey: String) -> CacheEntry? {
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

/// The binary form of ``FleetEntryCoding``: unsigned integers as LEB128, strings as their UTF-8
/// length and bytes, dates as the bits of `timeIntervalSinceReferenceDate` (exact), optionals
/// behind a 0/1 byte.
enum FleetEntryBytes {
    struct Writer {
        var bytes: [UInt8] = []

        mutating func integer(_ value: UInt64) {
            var rest = value
            while rest >= 0x80 {
                bytes.append(UInt8(truncatingIfNeeded: rest) | 0x80)
                rest >>= 7
            }
            bytes.append(UInt8(rest))
        }

        mutating func string(_ value: String) {
            integer(UInt64(value.utf8.count))
            bytes.append(contentsOf: value.utf8)
        }

        mutating func date(_ value: Date) {
            let bits = value.timeIntervalSinceReferenceDate.bitPattern
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: bits >> UInt64(shift))) }
        }

        mutating func optionalString(_ value: String?) {
            bytes.append(value == nil ? 0 : 1)
            if let value { string(value) }
        }

        mutating func optionalDate(_ value: Date?) {
            bytes.append(value == nil ? 0 : 1)
            if let value { date(value) }
        }
    }

    /// Reads what ``Writer`` wrote; every read is `nil` past the end or on a malformed value.
    /// The optional readers answer `.some(nil)` for an absent value.
    struct Reader {
        let bytes: UnsafeRawBufferPointer
        var offset: Int

        mutating func integer() -> UInt64? {
            var value: UInt64 = 0
            var shift: UInt64 = 0
            while offset < bytes.count, shift < 64 {
                let byte = bytes[offset]
                offset += 1
                value |= UInt64(byte & 0x7F) << shift
                if byte < 0x80 { return value }
                shift += 7
            }
            return nil
        }

        /// A count of items or bytes that the rest of the payload can hold.
        mutating func count() -> Int? {
            guard let value = integer(), value <= UInt64(bytes.count - offset) else { return nil }
            return Int(value)
        }

        mutating func string() -> String? {
            guard let length = count() else { return nil }
            defer { offset += length }
            return String(decoding: bytes[offset..<(offset + length)], as: UTF8.self)
        }

        mutating func date() -> Date? {
            guard bytes.count - offset >= 8 else { return nil }
            var bits: UInt64 = 0
            for index in 0..<8 { bits |= UInt64(bytes[offset + index]) << UInt64(8 * index) }
            offset += 8
            return Date(timeIntervalSinceReferenceDate: Double(bitPattern: bits))
        }

        mutating func optionalString() -> String?? {
            guard offset < bytes.count else { return nil }
            offset += 1
            guard bytes[offset - 1] == 1 else { return bytes[offset - 1] == 0 ? .some(nil) : nil }
            return string().map { .some($0) }
        }

        mutating func optionalDate() -> Date?? {
            guard offset < bytes.count else { return nil }
            offset += 1
            guard bytes[offset - 1] == 1 else { return bytes[offset - 1] == 0 ? .some(nil) : nil }
            return date().map { .some($0) }
        }
    }
}
