internal import Foundation

/// Percent-encoding rules used when building URLs and form bodies.
enum PercentEncoding {
    /// RFC 3986 unreserved characters: `A–Z a–z 0–9 - . _ ~`.
    static let unreserved: CharacterSet = {
        var set = CharacterSet()
        set.insert(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")
        return set
    }()

    /// Characters left as they are in a path: unreserved, sub-delims, `:`, `@`, `/`, `?` and `%`
    /// (so an already-encoded path, or one carrying its own query, stays as it is).
    static let pathAllowed: CharacterSet = {
        var set = unreserved
        set.insert(charactersIn: "!$&'()*+,;=:@/%?")
        return set
    }()

    /// Encodes a query name or value: everything but unreserved characters, byte by byte over
    /// UTF-8 (several times faster than `addingPercentEncoding` on Linux).
    static func queryComponent(_ text: String) -> String {
        if text.utf8.allSatisfy(isUnreserved) { return text }
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count * 3)
        for byte in text.utf8 {
            if isUnreserved(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                bytes.append(hex[Int(byte >> 4)])
                bytes.append(hex[Int(byte & 0x0F)])
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Appends the encoded query name or value to `bytes` (``queryComponent(_:)`` without the
    /// intermediate `String`).
    static func appendQueryComponent(_ text: String, to bytes: inout [UInt8]) {
        // Names and values are usually unreserved already: one check and one copy.
        let copied = text.utf8.withContiguousStorageIfAvailable { source -> Bool in
            guard source.allSatisfy(isUnreserved) else { return false }
            bytes.append(contentsOf: source)
            return true
        }
        if copied == true { return }
        let hex: StaticString = "0123456789ABCDEF"
        for byte in text.utf8 {
            if isUnreserved(byte) {
                bytes.append(byte)
            } else {
                bytes.append(UInt8(ascii: "%"))
                hex.withUTF8Buffer { digits in
                    bytes.append(digits[Int(byte >> 4)])
                    bytes.append(digits[Int(byte & 0x0F)])
                }
            }
        }
    }

    /// `A–Z a–z 0–9 - . _ ~`.
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
            true
        default:
            false
        }
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
    static func path(_ path: String) -> String {
        if path.utf8.allSatisfy(isPathAllowed) { return path }
        return path.addingPercentEncoding(withAllowedCharacters: pathAllowed) ?? path
    }

    /// The ASCII test behind ``pathAllowed``, for the fast path that needs no encoding.
    static func isPathAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "!"), UInt8(ascii: "$"), UInt8(ascii: "&"), UInt8(ascii: "'"), UInt8(ascii: "("), UInt8(ascii: ")"),
            UInt8(ascii: "*"), UInt8(ascii: "+"), UInt8(ascii: ","), UInt8(ascii: ";"), UInt8(ascii: "="), UInt8(ascii: ":"),
            UInt8(ascii: "@"), UInt8(ascii: "/"), UInt8(ascii: "%"), UInt8(ascii: "?"):
            true
        default:
            isUnreserved(byte)
        }
    }
}
