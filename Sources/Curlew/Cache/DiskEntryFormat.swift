internal import Crypto
internal import Foundation

/// The file format of one ``DiskCacheStorage`` entry:
///
/// ```
/// "CURLEWC1" | header length (UInt64 LE) | body length (UInt64 LE) | header (JSON: key and
/// response facts) | body | SHA-256 of everything before it (32 bytes)
/// ```
///
/// A file whose length is not exactly the sum, whose checksum differs, or whose header does not
/// decode is damaged: a miss, deleted by the store.
enum DiskEntryFormat {
    static let magic = Array("CURLEWC1".utf8)
    /// Magic plus the two lengths.
    static let prefixLength = 24
    static let checksumLength = 32

    /// The header: everything but the body.
    struct Header: Codable {
        var key: String
        var status: Int
        var headers: [CacheEntry.Header]
        var url: String
        var requestTime: Date
        var storedAt: Date
        var varyNames: [String]
        var varyTag: String?
        var discardAfter: Date?
    }

    /// What the index needs from a file without reading its body.
    struct Summary {
        var key: String
        var fileLength: Int
        var discardAfter: Date?
    }

    static func encode(_ entry: CacheEntry) throws -> Data {
        let header = Header(
            key: entry.key, status: entry.status, headers: entry.headers, url: entry.url, requestTime: entry.requestTime,
            storedAt: entry.storedAt, varyNames: entry.varyNames, varyTag: entry.varyTag, discardAfter: entry.discardAfter)
        let headerBytes = try JSONEncoder().encode(header)
        var file = Data(capacity: prefixLength + headerBytes.count + entry.body.count + checksumLength)
        file.append(contentsOf: magic)
        append(UInt64(headerBytes.count), to: &file)
        append(UInt64(entry.body.count), to: &file)
        file.append(headerBytes)
        file.append(entry.body)
        file.append(contentsOf: SHA256.hash(data: file))
        return file
    }

    /// The entry in `file`, or `nil` when the file is damaged in any way.
    static func decode(_ file: Data) -> CacheEntry? {
        guard let (headerLength, bodyLength) = lengths(file.prefix(prefixLength)),
            file.count == prefixLength + headerLength + bodyLength + checksumLength
        else { return nil }
        let checked = file.count - checksumLength
        let start = file.startIndex
        guard Data(SHA256.hash(data: file[start..<start + checked])) == file[(start + checked)...] else { return nil }
        let headerStart = start + prefixLength
        guard let header = try? JSONDecoder().decode(Header.self, from: file[headerStart..<headerStart + headerLength]) else { return nil }
        let body = Data(file[(headerStart + headerLength)..<(headerStart + headerLength + bodyLength)])
        return CacheEntry(
            key: header.key, status: header.status, headers: header.headers, body: body, url: header.url,
            requestTime: header.requestTime, storedAt: header.storedAt, varyNames: header.varyNames, varyTag: header.varyTag,
            discardAfter: header.discardAfter)
    }

    /// The header lengths from the first ``prefixLength`` bytes; `nil` without the magic or with
    /// absurd lengths.
    static func lengths(_ prefix: Data) -> (header: Int, body: Int)? {
        guard prefix.count == prefixLength, prefix.prefix(magic.count).elementsEqual(magic) else { return nil }
        let header = readUInt64(prefix, at: 8)
        let body = readUInt64(prefix, at: 16)
        guard header < 1 << 30, body < 1 << 40 else { return nil }
        return (Int(header), Int(body))
    }

    private static func append(_ value: UInt64, to data: inout Data) {
        for shift in stride(from: 0, to: 64, by: 8) { data.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
    }

    private static func readUInt64(_ data: Data, at offset: Int) -> UInt64 {
        var value: UInt64 = 0
        let base = data.startIndex + offset
        for index in 0..<8 { value |= UInt64(data[base + index]) << UInt64(index * 8) }
        return value
    }

    /// The file name for a key: the full SHA-256 in hex, so any key (`../`, 10 KB, NUL bytes)
    /// names a file inside the directory.
    static func fileName(for key: String) -> String {
        CacheDigest.hex(SHA256.hash(data: Data(key.utf8))) + ".entry"
    }
}

/// Hex digests for cache keys, file names and credential scopes.
enum CacheDigest {
    static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var text: [UInt8] = []
        text.reserveCapacity(64)
        for byte in bytes {
            text.append(digits[Int(byte >> 4)])
            text.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: text, as: UTF8.self)
    }

    static func sha256(_ text: String) -> String {
        hex(SHA256.hash(data: Data(text.utf8)))
    }
}
