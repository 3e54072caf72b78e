internal import Foundation

/// Percent-encoding rules used when building URLs and form bodies.
enum PercentEncoding {
    /// RFC 3986 unreserved characters: `A–Z a–z 0–9 - . _ ~`.
    static let unreserved: CharacterSet = {
        var set = CharacterSet()
        set.insert(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return set
    }()

    /// Encodes a query name or value: everything but unreserved characters, byte by byte over
    /// UTF-8 (several times faster than `addingPercentEncoding` on Linux).
    static func queryComponent(_ text: String) -> String {
        let length = queryComponentLength(text)
        if length == text.utf8.count { return text }
        return String(unsafeUninitializedCapacity: length) { writeQueryComponent(text, into: $0, at: 0) }
    }

    /// How many bytes the encoded query name or value takes (``queryComponent(_:)``'s length,
    /// without building it).
    static func queryComponentLength(_ text: String) -> Int {
        // Over contiguous UTF-8: iterating `String.UTF8View` goes through the view's index per byte.
        var text = text
        return text.withUTF8 { bytes in
            var length = 0
            for byte in bytes { length += isUnreserved(byte) ? 1 : 3 }
            return length
        }
    }

    /// Writes the encoded query name or value (``queryComponent(_:)`` without the intermediate
    /// `String`) into `out` from `position`, which must have room for
    /// ``queryComponentLength(_:)`` bytes (at most three per UTF-8 byte); returns the position
    /// after it.
    static func writeQueryComponent(_ text: String, into out: UnsafeMutableBufferPointer<UInt8>, at position: Int) -> Int {
        let hex: StaticString = "0123456789ABCDEF"
        var text = text
        return text.withUTF8 { bytes in
            hex.withUTF8Buffer { digits in
                var position = position
                for byte in bytes {
                    if isUnreserved(byte) {
                        out[position] = byte
                        position += 1
                    } else {
                        out[position] = UInt8(ascii: "%")
                        out[position + 1] = digits[Int(byte >> 4)]
                        out[position + 2] = digits[Int(byte & 0x0F)]
                        position += 3
                    }
                }
                return position
            }
        }
    }

    /// The value of one hexadecimal digit, or `nil`.
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }

    /// `A–Z a–z 0–9 - . _ ~`.
    static func isUnreserved(_ byte: UInt8) -> Bool {
        // Every byte of every query parameter middleware add is asked.
        ASCIIByteClass.unreserved.contains(byte)
    }

    /// `name=value&name=value`, RFC 3986 encoding; a `nil` value gives the bare name.
    static func query(_ items: [URLQueryItem]) -> String {
        items.map { item in
            let name = queryComponent(item.name)
            guard let value = item.value else { return name }
            return name + "=" + queryComponent(value)
        }.joined(separator: "&")
    }

    /// `application/x-www-form-urlencoded` per the URL standard: space becomes `+`.
    static func formEncoded(_ items: [URLQueryItem]) -> String {
        func encode(_ text: String) -> String {
            text.split(separator: " ", omittingEmptySubsequences: false)
                .map { queryComponent(String($0)) }
                .joined(separator: "+")
        }
        return items.map { item in
            guard let value = item.value else { return encode(item.name) }
            return encode(item.name) + "=" + encode(value)
        }.joined(separator: "&")
    }

    /// Encodes characters a path may not contain (spaces, non-ASCII, quotes…), keeping the rest.
    /// A `%` that starts an escape (`%2F`) stays, so an already-encoded path is sent as it is; a
    /// `%` that does not (`50%off`, a trailing `%`) is a literal percent sign and becomes `%25`.
    static func path(_ path: String) -> String {
        var text = path
        return text.withUTF8 { bytes in
            if bytes.allSatisfy(isPathAllowed), hasOnlyValidEscapes(bytes) { return path }
            let hex: StaticString = "0123456789ABCDEF"
            var encoded = [UInt8]()
            encoded.reserveCapacity(bytes.count * 3)
            hex.withUTF8Buffer { digits in
                for (index, byte) in bytes.enumerated() {
                    if isPathAllowed(byte), byte != UInt8(ascii: "%") || startsEscape(bytes, at: index) {
                        encoded.append(byte)
                    } else {
                        encoded.append(contentsOf: [UInt8(ascii: "%"), digits[Int(byte >> 4)], digits[Int(byte & 0x0F)]])
                    }
                }
            }
            return String(decoding: encoded, as: UTF8.self)
        }
    }

    /// Whether every `%` in `bytes` starts an escape: two hexadecimal digits follow it.
    static func hasOnlyValidEscapes(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        guard bytes.contains(UInt8(ascii: "%")) else { return true }
        for index in bytes.indices where bytes[index] == UInt8(ascii: "%") && !startsEscape(bytes, at: index) { return false }
        return true
    }

    /// Whether the `%` at `index` is followed by two hexadecimal digits.
    private static func startsEscape(_ bytes: UnsafeBufferPointer<UInt8>, at index: Int) -> Bool {
        index + 2 < bytes.count && hexValue(bytes[index + 1]) != nil && hexValue(bytes[index + 2]) != nil
    }

    /// Bytes a path keeps as they are: unreserved, sub-delims, `:`, `@`, `/`, `?` and `%` (so an
    /// already-encoded path, or one carrying its own query, stays as it is; ``path(_:)`` still
    /// encodes a `%` that starts no escape).
    static func isPathAllowed(_ byte: UInt8) -> Bool {
        // Every byte of every request path is asked.
        ASCIIByteClass.pathAllowed.contains(byte)
    }
}
