internal import Foundation

/// Reading and extending the query of an already-encoded URL (for middleware that add or sign
/// parameters after the request was prepared).
///
/// Works on UTF-8 bytes: no `Character` iteration, no `NSString` bridging, no
/// `removingPercentEncoding` (a middleware chain calls these on every request, and the
/// Foundation-based versions cost more than the whole transfer).
enum QueryString {
    /// The decoded query items of a URL, in order (`+` is a literal plus, as Curlew encodes spaces
    /// in queries as `%20`).
    static func items(of url: String) -> [(name: String, value: String)] {
        var url = url
        return url.withUTF8 { bytes in
            guard let range = queryRange(in: bytes) else { return [] }
            return pairs(UnsafeBufferPointer(rebasing: bytes[range]), plusIsSpace: false)
        }
    }

    /// The decoded names of a URL's query items, in order.
    static func names(of url: String) -> [String] {
        var url = url
        return url.withUTF8 { bytes in
            guard let range = queryRange(in: bytes) else { return [] }
            var names: [String] = []
            forEachPair(in: UnsafeBufferPointer(rebasing: bytes[range])) { name, _ in
                names.append(decode(name, plusIsSpace: false))
            }
            return names
        }
    }

    /// Whether the URL's query has an item named `name` (decoded), without building its items.
    static func hasItem(named name: String, in url: String) -> Bool {
        var url = url
        var name = name
        return url.withUTF8 { bytes in
            guard let range = queryRange(in: bytes) else { return false }
            return name.withUTF8 { wanted in
                var found = false
                forEachPair(in: UnsafeBufferPointer(rebasing: bytes[range])) { written, _ in
                    guard !found else { return }
                    if written.elementsEqual(wanted) {
                        found = true
                    } else if written.contains(UInt8(ascii: "%")) {
                        found = decode(written, plusIsSpace: false).utf8.elementsEqual(wanted)
                    }
                }
                return found
            }
        }
    }

    /// Decoded `name=value` pairs of a query or form body.
    static func pairs(_ text: String, plusIsSpace: Bool) -> [(name: String, value: String)] {
        var text = text
        return text.withUTF8 { pairs($0, plusIsSpace: plusIsSpace) }
    }

    /// The URL with items appended to its query, RFC 3986 encoded.
    static func appending(_ items: [URLQueryItem], to url: String) -> String {
        appending(items.map { ($0.name, $0.value) }, to: url)
    }

    /// The URL with `name=value` items appended to its query, RFC 3986 encoded; a `nil` value
    /// gives the bare name.
    ///
    /// Written in one pass straight into the new string's storage: every parameter-adding
    /// middleware calls this on every request.
    static func appending(_ items: [(name: String, value: String?)], to url: String) -> String {
        guard !items.isEmpty else { return url }
        var url = url
        return url.withUTF8 { bytes in
            let fragmentStart = bytes.firstIndex(ofByte: UInt8(ascii: "#")) ?? bytes.count
            let base = UnsafeBufferPointer(rebasing: bytes[..<fragmentStart])
            var separator: UInt8?
            if base.firstIndex(ofByte: UInt8(ascii: "?")) != nil {
                if let last = base.last, last != UInt8(ascii: "?"), last != UInt8(ascii: "&") { separator = UInt8(ascii: "&") }
            } else {
                separator = UInt8(ascii: "?")
            }
            // Room for the worst case (every byte escaped): one allocation, one pass.
            var capacity = bytes.count + (separator == nil ? 0 : 1) + items.count - 1
            for item in items {
                capacity += 3 * item.name.utf8.count
                if let value = item.value { capacity += 1 + 3 * value.utf8.count }
            }
            return String(unsafeUninitializedCapacity: capacity) { out in
                var position = out.initialize(fromContentsOf: base)
                if let separator {
                    out[position] = separator
                    position += 1
                }
                for (index, item) in items.enumerated() {
                    if index > 0 {
                        out[position] = UInt8(ascii: "&")
                        position += 1
                    }
                    position = PercentEncoding.writeQueryComponent(item.name, into: out, at: position)
                    if let value = item.value {
                        out[position] = UInt8(ascii: "=")
                        position = PercentEncoding.writeQueryComponent(value, into: out, at: position + 1)
                    }
                }
                let fragment = UnsafeBufferPointer(rebasing: bytes[fragmentStart...])
                return position + UnsafeMutableBufferPointer(rebasing: out[position...]).initialize(fromContentsOf: fragment)
            }
        }
    }

    /// The bytes between the first `?` and the first `#` after it; `nil` when there is no `?` before
    /// the fragment.
    static func queryRange(in bytes: UnsafeBufferPointer<UInt8>) -> Range<Int>? {
        guard let question = bytes.firstIndex(ofByte: UInt8(ascii: "?")) else { return nil }
        guard UnsafeBufferPointer(rebasing: bytes[..<question]).firstIndex(ofByte: UInt8(ascii: "#")) == nil else { return nil }
        let rest = UnsafeBufferPointer(rebasing: bytes[(question + 1)...])
        return (question + 1)..<(question + 1 + (rest.firstIndex(ofByte: UInt8(ascii: "#")) ?? rest.count))
    }

    private static func pairs(_ bytes: UnsafeBufferPointer<UInt8>, plusIsSpace: Bool) -> [(name: String, value: String)] {
        var result: [(name: String, value: String)] = []
        forEachPair(in: bytes) { name, value in
            result.append((decode(name, plusIsSpace: plusIsSpace), value.map { decode($0, plusIsSpace: plusIsSpace) } ?? ""))
        }
        return result
    }

    /// Calls `body` with each non-empty `&`-separated part, split at its first `=` (the value is
    /// `nil` when there is none).
    private static func forEachPair(
        in bytes: UnsafeBufferPointer<UInt8>,
        _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>?) -> Void
    ) {
        var start = 0
        while start < bytes.count {
            var end = start
            var equals: Int?
            while end < bytes.count, bytes[end] != UInt8(ascii: "&") {
                if equals == nil, bytes[end] == UInt8(ascii: "=") { equals = end }
                end += 1
            }
            if end > start {
                if let equals {
                    body(UnsafeBufferPointer(rebasing: bytes[start..<equals]), UnsafeBufferPointer(rebasing: bytes[(equals + 1)..<end]))
                } else {
                    body(UnsafeBufferPointer(rebasing: bytes[start..<end]), nil)
                }
            }
            start = end + 1
        }
    }

    /// Percent-decodes (and, for forms, turns `+` into a space). Like Foundation's
    /// `removingPercentEncoding`, a malformed escape or bytes that are not UTF-8 leave the text
    /// as it was (after the `+` replacement).
    static func decode(_ bytes: UnsafeBufferPointer<UInt8>, plusIsSpace: Bool) -> String {
        let needsWork = bytes.contains { $0 == UInt8(ascii: "%") || (plusIsSpace && $0 == UInt8(ascii: "+")) }
        guard needsWork else { return String(decoding: bytes, as: UTF8.self) }
        var decoded: [UInt8] = []
        appendDecoded(bytes, plusIsSpace: plusIsSpace, to: &decoded)
        return String(decoding: decoded, as: UTF8.self)
    }

    /// Appends what ``decode(_:plusIsSpace:)`` gives, as bytes, to `out` (which the signing
    /// middleware's ``SignedPairs`` fills with every pair).
    static func appendDecoded(_ bytes: UnsafeBufferPointer<UInt8>, plusIsSpace: Bool, to out: inout [UInt8]) {
        let start = out.count
        var index = 0
        var decodedCleanly = true
        while index < bytes.count {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                guard index + 2 < bytes.count, let high = PercentEncoding.hexValue(bytes[index + 1]),
                    let low = PercentEncoding.hexValue(bytes[index + 2])
                else {
                    decodedCleanly = false
                    break
                }
                out.append(high << 4 | low)
                index += 3
            } else {
                out.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index += 1
            }
        }
        if decodedCleanly, String(validating: out[start...], as: UTF8.self) == nil { decodedCleanly = false }
        if !decodedCleanly {
            out.removeSubrange(start...)
            for byte in bytes { out.append(plusIsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte) }
        }
    }
}
