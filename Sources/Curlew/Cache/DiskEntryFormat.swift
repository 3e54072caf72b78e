internal import Crypto
internal import Foundation
internal import HTTPTypes

/// The file format of one ``DiskCacheStorage`` entry:
///
/// ```
/// "CURLEWC2" | header length (UInt64 LE) | body length (UInt64 LE) | header (binary: key and
/// response facts) | body | checksum of everything before it (UInt64 LE)
/// ```
///
/// The header is length-prefixed binary (no JSON parsing on a hit); the checksum is
/// ``CacheChecksum`` (64 bits, word at a time), which detects truncation, any change within one
/// 8-byte word for certain, and other damage with probability 1 − 2⁻⁶⁴ — the stored key is
/// compared as well, so it guards against damage, not against an adversary who can write the
/// cache directory. A file whose length is not exactly the sum, whose checksum differs, or whose
/// header does not decode is damaged: a miss, deleted by the store. Files of the earlier JSON
/// format (`CURLEWC1`) count as damaged and are deleted on open.
enum DiskEntryFormat {
    static let magic = Array("CURLEWC2".utf8)
    /// Magic plus the two lengths.
    static let prefixLength = 24
    static let checksumLength = 8

    /// What the index needs from a file without reading its body.
    struct Summary {
        var key: String
        var fileLength: Int
        var discardAfter: Date?
    }

    static func encode(_ entry: CacheEntry) throws -> Data {
        var header = BinaryWriter()
        header.string(entry.key)
        header.uint64(UInt64(truncatingIfNeeded: entry.status))
        header.string(entry.url)
        header.date(entry.requestTime)
        header.date(entry.storedAt)
        header.optionalDate(entry.discardAfter)
        header.optionalString(entry.varyTag)
        header.uint64(UInt64(entry.varyNames.count))
        entry.varyNames.forEach { header.string($0) }
        header.uint64(UInt64(entry.headers.count))
        for field in entry.headers {
            header.string(field.name.rawName)
            header.string(field.value)
        }
        var file = [UInt8]()
        file.reserveCapacity(prefixLength + header.bytes.count + entry.body.count + checksumLength)
        file.append(contentsOf: magic)
        BinaryWriter.append(UInt64(header.bytes.count), to: &file)
        BinaryWriter.append(UInt64(entry.body.count), to: &file)
        file.append(contentsOf: header.bytes)
        file.append(contentsOf: entry.body)
        let checksum = file.withUnsafeBytes { CacheChecksum.hash($0) }
        BinaryWriter.append(checksum, to: &file)
        return Data(file)
    }

    /// The entry in `file`, or `nil` when the file is damaged in any way.
    static func decode(_ file: Data) -> CacheEntry? {
        file.withUnsafeBytes { bytes -> CacheEntry? in
            guard let (headerLength, bodyLength) = lengths(UnsafeRawBufferPointer(rebasing: bytes.prefix(prefixLength))),
                bytes.count == prefixLength + headerLength + bodyLength + checksumLength
            else { return nil }
            let checked = bytes.count - checksumLength
            guard CacheChecksum.hash(UnsafeRawBufferPointer(rebasing: bytes[..<checked])) == bytes.loadUnaligned(fromByteOffset: checked, as: UInt64.self).littleEndian
            else { return nil }
            var reader = BinaryReader(UnsafeRawBufferPointer(rebasing: bytes[prefixLength..<(prefixLength + headerLength)]))
            guard let key = reader.string(), let status = reader.uint64(), status < 1000, let url = reader.string(),
                let requestTime = reader.date(), let storedAt = reader.date(), let discardAfter = reader.optionalDate(),
                let varyTag = reader.optionalString(), let varyCount = reader.count()
            else { return nil }
            var varyNames: [String] = []
            for _ in 0..<varyCount {
                guard let name = reader.string() else { return nil }
                varyNames.append(name)
            }
            guard let headerCount = reader.count() else { return nil }
            var headers = HTTPFields()
            headers.reserveCapacity(headerCount)
            for _ in 0..<headerCount {
                guard let name = reader.string().flatMap({ HTTPField.Name($0) }), let value = reader.string() else { return nil }
                headers.append(HTTPField(name: name, value: value))
            }
            guard reader.isAtEnd else { return nil }
            let bodyStart = prefixLength + headerLength
            let body = Data(UnsafeRawBufferPointer(rebasing: bytes[bodyStart..<(bodyStart + bodyLength)]))
            return CacheEntry(
                key: key, status: Int(status), headers: headers, body: body, url: url, requestTime: requestTime, storedAt: storedAt,
                varyNames: varyNames, varyTag: varyTag.value, discardAfter: discardAfter.value)
        }
    }

    /// The key and expiry from a file's prefix and header (its body and checksum unread).
    static func summary(prefixAndHeader: Data, fileLength: Int) -> Summary? {
        prefixAndHeader.withUnsafeBytes { bytes -> Summary? in
            guard bytes.count >= prefixLength, let (headerLength, bodyLength) = lengths(UnsafeRawBufferPointer(rebasing: bytes.prefix(prefixLength))),
                fileLength == prefixLength + headerLength + bodyLength + checksumLength, bytes.count == prefixLength + headerLength
            else { return nil }
            var reader = BinaryReader(UnsafeRawBufferPointer(rebasing: bytes[prefixLength...]))
            guard let key = reader.string(), reader.uint64() != nil, reader.string() != nil, reader.date() != nil, reader.date() != nil,
                let discardAfter = reader.optionalDate()
            else { return nil }
            return Summary(key: key, fileLength: fileLength, discardAfter: discardAfter.value)
        }
    }

    /// The header lengths from the first ``prefixLength`` bytes; `nil` without the magic or with
    /// absurd lengths.
    static func lengths(_ prefix: UnsafeRawBufferPointer) -> (header: Int, body: Int)? {
        guard prefix.count == prefixLength, prefix.prefix(magic.count).elementsEqual(magic) else { return nil }
        let header = prefix.loadUnaligned(fromByteOffset: 8, as: UInt64.self).littleEndian
        let body = prefix.loadUnaligned(fromByteOffset: 16, as: UInt64.self).littleEndian
        guard header < 1 << 30, body < 1 << 40 else { return nil }
        return (Int(header), Int(body))
    }

    /// The header lengths from the first ``prefixLength`` bytes of `prefix`.
    static func lengths(_ prefix: Data) -> (header: Int, body: Int)? {
        prefix.withUnsafeBytes { lengths($0) }
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
