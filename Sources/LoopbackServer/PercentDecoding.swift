/// Percent-decoding helpers for request targets (no Foundation needed).
enum PercentDecoding {
    /// Splits a raw query on `&` and `=` and percent-decodes both sides; `+` stays `+`.
    static func queryItems(_ query: String) -> [ServerRequest.Field] {
        query.split(separator: "&", omittingEmptySubsequences: true).map { item in
            if let equals = item.firstIndex(of: "=") {
                return ServerRequest.Field(
                    name: decode(item[..<equals]),
                    value: decode(item[item.index(after: equals)...])
                )
            }
            return ServerRequest.Field(name: decode(item), value: "")
        }
    }

    /// Replaces `%XX` escapes by their bytes and decodes the result as UTF-8.
    /// Malformed escapes are kept literally.
    static func decode(_ text: Substring) -> String {
        let utf8 = Array(text.utf8)
        guard utf8.contains(UInt8(ascii: "%")) else {
            return String(text)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(utf8.count)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            if byte == UInt8(ascii: "%"), index + 2 < utf8.count,
                let high = hexValue(utf8[index + 1]), let low = hexValue(utf8[index + 2])
            {
                bytes.append(high << 4 | low)
                index += 3
            } else {
                bytes.append(byte)
                index += 1
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Percent-decodes a whole string (see the `Substring` overload).
    static func decode(_ text: String) -> String {
        decode(Substring(text))
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
