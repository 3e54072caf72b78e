internal import Glibc

/// Checks the framing of each response head libcurl hands to the header callback, on the engine
/// thread, so that a response whose length cannot be known for sure is never taken as complete.
///
/// libcurl 7.88 accepts, and reports as success: a head cut off by the connection closing
/// (no blank line), two `Content-Length` headers with different values, and a
/// `Transfer-Encoding` whose last coding is not `chunked` (the body then "ends" wherever the
/// connection does). RFC 9112 §6.3 makes each of these unreliable; Curlew fails them with
/// `.protocolError`. A violation found in a head aborts the transfer from the header callback,
/// which makes libcurl close the connection instead of returning it to the cache.
package struct ResponseFraming {
    /// Whether the current head's blank line was seen (the head is complete).
    package private(set) var headComplete = false
    /// Whether any status line was seen.
    package private(set) var sawStatusLine = false
    /// The current head's `Content-Length` value, once seen.
    private var contentLength: UInt64?
    /// The current head's transfer codings, in order, lower-cased.
    private var transferCodings: [Substring] = []
    /// The current head's content codings, in order, lower-cased, without `identity`
    /// (``ResponseContentDecoder`` decodes them; empty for almost every response).
    package private(set) var contentCodings: [Substring] = []

    /// A status line started a new head (``ResponseHeadParser/Line/status``).
    package mutating func startHead() {
        self = ResponseFraming()
        sawStatusLine = true
    }

    /// Records one field line of the current head, or the blank line that ends it. Returns the
    /// violation, if this line completes one.
    package mutating func consume(line bytes: UnsafeRawBufferPointer) -> String? {
        var end = bytes.count
        while end > 0, bytes[end - 1] == UInt8(ascii: "\n") || bytes[end - 1] == UInt8(ascii: "\r") { end -= 1 }
        if end == 0 {
            headComplete = true
            if !transferCodings.isEmpty {
                if transferCodings.last != "chunked" {
                    return "the response's Transfer-Encoding does not end with chunked, so its length is unknown"
                }
                if contentLength != nil {
                    return "the response has both Transfer-Encoding and Content-Length"
                }
            }
            return nil
        }
        // `memchr` rather than the generic `firstIndex(of:)` on a buffer slice: this runs for
        // every header line of every response.
        guard let base = bytes.baseAddress, let found = memchr(base, Int32(UInt8(ascii: ":")), end) else { return nil }
        let colon = UnsafeRawPointer(found) - base
        let name = bytes[0..<colon]
        // The name's length picks the one field it can be (most lines are none of them).
        switch colon {
        case 14 where Self.equalsIgnoringCase(name, "content-length"):
            // A list of identical values is one value (RFC 9110 §8.6); anything else is not.
            guard let value = Self.contentLength(bytes[(colon + 1)..<end]) else {
                return "the response's Content-Length is not one number"
            }
            if let known = contentLength, known != value {
                return "the response has two different Content-Length values"
            }
            contentLength = value
        case 17 where Self.equalsIgnoringCase(name, "transfer-encoding"):
            transferCodings.append(contentsOf: Self.codings(bytes[(colon + 1)..<end]))
        case 16 where Self.equalsIgnoringCase(name, "content-encoding"):
            contentCodings.append(contentsOf: Self.codings(bytes[(colon + 1)..<end]).filter { $0 != "identity" })
        default:
            break
        }
        return nil
    }

    /// The value of a `Content-Length` field: one number, or a comma-separated list of the same
    /// number; `nil` for anything else. Parsed from the bytes, without making a string.
    private static func contentLength(_ bytes: Slice<UnsafeRawBufferPointer>) -> UInt64? {
        var result: UInt64?
        var current: UInt64 = 0
        var digits = 0
        var afterNumber = false
        func finish() -> Bool {
            guard digits > 0 else { return false }
            if let result, result != current { return false }
            result = current
            current = 0
            digits = 0
            afterNumber = false
            return true
        }
        for byte in bytes {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                guard !afterNumber, digits < 19 else { return nil }
                current = current * 10 + UInt64(byte - UInt8(ascii: "0"))
                digits += 1
            case UInt8(ascii: " "), UInt8(ascii: "\t"):
                if digits > 0 { afterNumber = true }
            case UInt8(ascii: ","):
                guard finish() else { return nil }
            default:
                return nil
            }
        }
        guard finish() else { return nil }
        return result
    }

    /// The codings of a `Transfer-Encoding` or `Content-Encoding` value, lower-cased, without
    /// parameters and empty list elements.
    private static func codings(_ bytes: Slice<UnsafeRawBufferPointer>) -> [Substring] {
        let value = trimmed(bytes).lowercased()
        return value.split(separator: ",").compactMap { coding in
            let token = coding.split(separator: ";").first.map { $0.trimmingSpaces() } ?? ""
            return token.isEmpty ? nil : token
        }
    }

    private static func equalsIgnoringCase(_ bytes: Slice<UnsafeRawBufferPointer>, _ name: StaticString) -> Bool {
        guard bytes.count == name.utf8CodeUnitCount else { return false }
        let expected = UnsafeBufferPointer(start: name.utf8Start, count: name.utf8CodeUnitCount)
        return zip(bytes, expected).allSatisfy { ($0 | 0x20) == $1 }
    }

    private static func trimmed(_ bytes: Slice<UnsafeRawBufferPointer>) -> Substring {
        Substring(String(decoding: bytes, as: UTF8.self)).trimmingSpaces()
    }
}

extension Substring {
    /// Without leading and trailing spaces and tabs.
    fileprivate func trimmingSpaces() -> Substring {
        var result = self
        while let first = result.first, first == " " || first == "\t" { result = result.dropFirst() }
        while let last = result.last, last == " " || last == "\t" { result = result.dropLast() }
        return result
    }
}
