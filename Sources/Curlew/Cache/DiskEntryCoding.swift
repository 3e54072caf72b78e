internal import Foundation

/// A decoded optional field: `value` is `nil` when the field was stored as absent (the reader
/// itself returns `nil` for damaged bytes).
struct DecodedOptional<Value> {
    var value: Value?
}

/// Appends the little-endian, length-prefixed fields of a disk entry's header.
struct BinaryWriter {
    var bytes: [UInt8] = []

    static func append(_ value: UInt64, to bytes: inout [UInt8]) {
        withUnsafeBytes(of: value.littleEndian) { bytes.append(contentsOf: $0) }
    }

    mutating func uint64(_ value: UInt64) { Self.append(value, to: &bytes) }

    mutating func string(_ text: String) {
        var text = text
        text.withUTF8 { utf8 in
            uint64(UInt64(utf8.count))
            bytes.append(contentsOf: utf8)
        }
    }

    mutating func date(_ date: Date) { uint64(date.timeIntervalSince1970.bitPattern) }

    mutating func optionalDate(_ date: Date?) {
        bytes.append(date == nil ? 0 : 1)
        if let date { self.date(date) }
    }

    mutating func optionalString(_ text: String?) {
        bytes.append(text == nil ? 0 : 1)
        if let text { string(text) }
    }
}

/// Reads what ``BinaryWriter`` wrote; every read is bounds-checked and returns `nil` past the
/// end or on an absurd length, so damaged bytes can never trap.
struct BinaryReader {
    private let bytes: UnsafeRawBufferPointer
    private var offset = 0

    init(_ bytes: UnsafeRawBufferPointer) { self.bytes = bytes }

    var isAtEnd: Bool { offset == bytes.count }

    mutating func uint64() -> UInt64? {
        guard bytes.count - offset >= 8 else { return nil }
        let value = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian
        offset += 8
        return value
    }

    /// A count of following items, each at least 8 bytes long.
    mutating func count() -> Int? {
        guard let value = uint64(), value <= UInt64(bytes.count - offset) / 8 else { return nil }
        return Int(value)
    }

    mutating func string() -> String? {
        guard let length = uint64(), length <= UInt64(bytes.count - offset) else { return nil }
        let start = offset
        offset += Int(length)
        // The checksum already vouched for these bytes; decoding repairs rather than rejects, and
        // is much cheaper than validating through the generic path.
        let field = UnsafeRawBufferPointer(rebasing: bytes[start..<offset]).assumingMemoryBound(to: UInt8.self)
        return String(decoding: field, as: UTF8.self)
    }

    mutating func date() -> Date? {
        guard let bits = uint64() else { return nil }
        let seconds = Double(bitPattern: bits)
        guard seconds.isFinite else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    mutating func flag() -> Bool? {
        guard offset < bytes.count, bytes[offset] <= 1 else { return nil }
        defer { offset += 1 }
        return bytes[offset] == 1
    }

    mutating func optionalDate() -> DecodedOptional<Date>? {
        guard let present = flag() else { return nil }
        guard present else { return DecodedOptional(value: nil) }
        return date().map { DecodedOptional(value: $0) }
    }

    mutating func optionalString() -> DecodedOptional<String>? {
        guard let present = flag() else { return nil }
        guard present else { return DecodedOptional(value: nil) }
        return string().map { DecodedOptional(value: $0) }
    }
}

/// The 64-bit checksum of a disk entry: eight bytes at a time, each step
/// `h = rotl((h ^ word) × odd, 29)` — a bijection of `h` for a given word, so two inputs that
/// differ in exactly one word always differ in the result — then the tail bytes, the length and
/// a final avalanche. About one instruction per byte instead of SHA-256's dozen; it guards
/// against damage (truncation, bit flips, half-written files), not against forgery.
enum CacheChecksum {
    private static let multiplier: UInt64 = 0x9E37_79B9_7F4A_7C15
    private static let seed: UInt64 = 0x6375_726C_6577_6332  // "curlewc2"

    static func hash(_ bytes: UnsafeRawBufferPointer) -> UInt64 {
        var h = seed
        var offset = 0
        let count = bytes.count
        while count - offset >= 8 {
            let word = bytes.loadUnaligned(fromByteOffset: offset, as: UInt64.self).littleEndian
            h = mix(h, word)
            offset += 8
        }
        var tail: UInt64 = 0
        var shift: UInt64 = 0
        while offset < count {
            tail |= UInt64(bytes[offset]) << shift
            shift += 8
            offset += 1
        }
        h = mix(h, tail)
        h = mix(h, UInt64(count))
        h ^= h >> 33
        h = h &* 0xFF51_AFD7_ED55_8CCD
        h ^= h >> 33
        h = h &* 0xC4CE_B9FE_1A85_EC53
        h ^= h >> 33
        return h
    }

    private static func mix(_ h: UInt64, _ word: UInt64) -> UInt64 {
        let product = (h ^ word) &* multiplier
        return (product << 29) | (product >> 35)
    }
}
