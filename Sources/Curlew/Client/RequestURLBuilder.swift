internal import Foundation
internal import HTTPTypes

/// Builds and validates the absolute URL of a request from the base URL, path and query items.
struct RequestURLBuilder {
    let baseURL: String?
    let path: String
    let query: [URLQueryItem]
    let method: HTTPRequest.Method

    func build() throws(CurlewError) -> String {
        if query.isEmpty, let url = fastURL() { return url }
        return try buildRuleByRule()
    }

    /// Every rule in turn, with a precise error for the first one broken; ``build()`` gives the
    /// same URL by a faster path for the common shapes.
    func buildRuleByRule() throws(CurlewError) -> String {
        func fail(_ code: CurlewError.Code, _ message: String) -> CurlewError {
            CurlewError(code: code, message: message, request: RequestSummary(method: method, url: Self.visible((baseURL ?? "") + path)))
        }
        if path.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
            throw fail(.invalidPath, "the path contains CR, LF, NUL or another control character")
        }
        var url: String
        if let scheme = Self.scheme(of: path), !Self.isRelativeWithColon(path, scheme: scheme, baseURL: baseURL) {
            guard scheme == "http" || scheme == "https" else {
                throw fail(.unsupportedScheme, "scheme \"\(scheme)\" is not supported; use http or https")
            }
            url = Self.encodingAfterAuthority(path)
        } else {
            guard let baseURL, !baseURL.isEmpty else {
                throw fail(.malformedURL, "the path is relative and the client has no base URL")
            }
            if baseURL.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) {
                throw fail(.malformedURL, "the base URL contains a control character")
            }
            if baseURL.contains("#") {
                throw fail(.malformedURL, "the base URL has a fragment (#…), which is never sent; remove it")
            }
            // A base URL may carry its own query (`https://host/v1?key=…`): the path goes before
            // it, and the path's own query and the query items after it.
            var base = Substring(baseURL)
            var baseQuery: Substring = ""
            if let mark = base.firstIndex(of: "?") {
                baseQuery = base[base.index(after: mark)...]
                base = base[..<mark]
            }
            while base.hasSuffix("/") { base = base.dropLast() }
            var relative = Substring(path)
            while relative.hasPrefix("/") { relative = relative.dropFirst() }
            url = relative.isEmpty ? String(base) : String(base) + "/" + PercentEncoding.path(String(relative))
            if !baseQuery.isEmpty {
                if let mark = url.firstIndex(of: "?") {
                    url.insert(contentsOf: baseQuery + "&", at: url.index(after: mark))
                } else {
                    url += "?" + baseQuery
                }
            }
        }
        if !query.isEmpty {
            let encoded = PercentEncoding.query(query)
            url += url.contains("?") ? "&" + encoded : "?" + encoded
        }
        try Self.validateAbsolute(url, method: method)
        return url
    }

    /// The URL of the common shapes in one pass over contiguous UTF-8 bytes, without a
    /// `String.UTF8View` walk per rule: an absolute `http://`/`https://` path, or a relative
    /// path without `:` under such a base URL (without a query or fragment), where every byte of
    /// the path may stay as it is (``PercentEncoding/path(_:)`` would not change it) and the
    /// authority has a host and a numeric port. `nil` for anything else, which ``build()`` then checks rule by rule and
    /// reports precisely; the URL is the same either way.
    private func fastURL() -> String? {
        var path = self.path
        let shape = path.withUTF8 { bytes -> FastPath? in
            if let authority = Self.httpAuthorityStart(bytes) {
                guard bytes.allSatisfy(PercentEncoding.isPathAllowed), PercentEncoding.hasOnlyValidEscapes(bytes),
                    Self.hasValidAuthority(bytes, from: authority)
                else { return nil }
                return .absolute
            }
            guard bytes.allSatisfy({ PercentEncoding.isPathAllowed($0) && $0 != UInt8(ascii: ":") }),
                PercentEncoding.hasOnlyValidEscapes(bytes)
            else { return nil }
            var start = 0
            while start < bytes.count, bytes[start] == UInt8(ascii: "/") { start += 1 }
            return .relative(start == bytes.count ? "" : String(decoding: UnsafeBufferPointer(rebasing: bytes[start...]), as: UTF8.self))
        }
        switch shape {
        case nil:
            return nil
        case .absolute:
            return path
        case .relative(let relative):
            guard let original = baseURL else { return nil }
            var base = original
            let checked = base.withUTF8 { bytes -> String? in
                var end = bytes.count
                while end > 0, bytes[end - 1] == UInt8(ascii: "/") { end -= 1 }
                let trimmed = UnsafeBufferPointer(rebasing: bytes[..<end])
                guard let authority = Self.httpAuthorityStart(trimmed),
                    trimmed.allSatisfy({ $0 > 0x20 && $0 != 0x7F && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }),
                    Self.hasValidAuthority(trimmed, from: authority)
                else { return nil }
                return end == bytes.count ? original : String(decoding: trimmed, as: UTF8.self)
            }
            guard let checked else { return nil }
            return relative.isEmpty ? checked : checked + "/" + relative
        }
    }

    /// Whether `path`, which starts like a URL with `scheme`, is a relative path under the base
    /// URL instead: a first segment with a colon (`documents:commit`, a custom method of a
    /// resource) that is neither `http`/`https` nor followed by `//`, on a client with a base URL.
    private static func isRelativeWithColon(_ path: String, scheme: String, baseURL: String?) -> Bool {
        guard let baseURL, !baseURL.isEmpty, scheme != "http", scheme != "https" else { return false }
        return !path.utf8.dropFirst(scheme.utf8.count + 1).starts(with: "//".utf8)
    }

    /// An absolute URL with its path, query and fragment percent-encoded and its authority as it
    /// is (an IPv6 host keeps its brackets: `http://[::1]:8080/x`).
    private static func encodingAfterAuthority(_ url: String) -> String {
        guard let separator = url.range(of: "://") else { return PercentEncoding.path(url) }
        let rest = url[separator.upperBound...]
        let end = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        return String(url[..<end]) + PercentEncoding.path(String(url[end...]))
    }

    /// What ``fastURL()`` found in the path.
    private enum FastPath {
        case absolute
        /// The path without its leading slashes.
        case relative(String)
    }

    /// The index after `http://` or `https://` (lower case) at the start, `nil` otherwise.
    private static func httpAuthorityStart(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        if bytes.hasPrefix("http://") { return 7 }
        if bytes.hasPrefix("https://") { return 8 }
        return nil
    }

    /// ``validateAbsolute(_:method:)``'s authority rules on bytes: a host, and a port (if any)
    /// of at most five digits.
    private static func hasValidAuthority(_ bytes: UnsafeBufferPointer<UInt8>, from start: Int) -> Bool {
        var end = start
        while end < bytes.count, bytes[end] != UInt8(ascii: "/"), bytes[end] != UInt8(ascii: "?"), bytes[end] != UInt8(ascii: "#") { end += 1 }
        var hostStart = start
        var index = end
        while index > start {
            index -= 1
            if bytes[index] == UInt8(ascii: "@") { hostStart = index + 1; break }
        }
        var hostEnd = hostStart
        if hostStart < end, bytes[hostStart] == UInt8(ascii: "[") {
            while hostEnd < end, bytes[hostEnd] != UInt8(ascii: "]") { hostEnd += 1 }
            guard hostEnd < end else { return false }
            hostEnd += 1
        } else {
            while hostEnd < end, bytes[hostEnd] != UInt8(ascii: ":") { hostEnd += 1 }
        }
        guard hostStart < hostEnd else { return false }
        let portStart = hostEnd < end ? hostEnd + 1 : end
        guard end - portStart <= 5 else { return false }
        for position in portStart..<end where bytes[position] < UInt8(ascii: "0") || bytes[position] > UInt8(ascii: "9") { return false }
        return true
    }

    /// Checks that a URL is absolute http(s) with a host and no spaces or control characters.
    /// Works on the UTF-8 bytes; no URL parser runs on the hot path.
    static func validateAbsolute(_ url: String, method: HTTPRequest.Method) throws(CurlewError) {
        func fail(_ code: CurlewError.Code, _ message: String) -> CurlewError {
            CurlewError(code: code, message: message, request: RequestSummary(method: method, url: visible(url)))
        }
        if url.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            throw fail(.invalidPath, "the URL contains a space or control character")
        }
        guard let scheme = scheme(of: url) else {
            throw fail(.malformedURL, "the URL has no scheme")
        }
        guard scheme == "http" || scheme == "https" else {
            throw fail(.unsupportedScheme, "scheme \"\(scheme)\" is not supported; use http or https")
        }
        // scheme "://" authority — the authority ends at "/", "?" or "#" and needs a host.
        let bytes = url.utf8
        let afterScheme = bytes.index(bytes.startIndex, offsetBy: scheme.utf8.count + 1)
        guard bytes[afterScheme...].starts(with: "//".utf8) else {
            throw fail(.malformedURL, "the URL has no authority (expected \"\(scheme)://host\")")
        }
        let authorityStart = bytes.index(afterScheme, offsetBy: 2)
        let authorityEnd = bytes[authorityStart...].firstIndex { $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "?") || $0 == UInt8(ascii: "#") } ?? bytes.endIndex
        var hostStart = authorityStart
        if let at = bytes[authorityStart..<authorityEnd].lastIndex(of: UInt8(ascii: "@")) { hostStart = bytes.index(after: at) }
        let hostAndPort = bytes[hostStart..<authorityEnd]
        let hostEnd: String.UTF8View.Index
        if hostAndPort.first == UInt8(ascii: "[") {
            guard let close = hostAndPort.firstIndex(of: UInt8(ascii: "]")) else { throw fail(.malformedURL, "the URL's IPv6 host is not closed") }
            hostEnd = bytes.index(after: close)
        } else {
            hostEnd = hostAndPort.firstIndex(of: UInt8(ascii: ":")) ?? authorityEnd
        }
        guard hostStart < hostEnd else { throw fail(.malformedURL, "the URL has no host") }
        let port = bytes[hostEnd..<authorityEnd].dropFirst()
        guard port.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }), port.count <= 5 else {
            throw fail(.malformedURL, "the URL's port is not a number")
        }
    }

    /// The lower-cased scheme when the string starts with `scheme:`, `nil` for relative paths.
    /// Works on UTF-8 bytes (RFC 3986: `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`): no
    /// `Character` iteration or Unicode property look-ups on the hot path.
    static func scheme(of text: String) -> String? {
        let bytes = text.utf8
        guard let colon = bytes.firstIndex(of: UInt8(ascii: ":")) else { return nil }
        let candidate = bytes[..<colon]
        func isLetter(_ byte: UInt8) -> Bool { (byte | 0x20) >= UInt8(ascii: "a") && (byte | 0x20) <= UInt8(ascii: "z") }
        guard let first = candidate.first, isLetter(first),
            candidate.allSatisfy({ byte in
                isLetter(byte) || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
                    || byte == UInt8(ascii: "+") || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".")
            })
        else { return nil }
        // "localhost:8080/x" is not a scheme; require "//" after schemes that look like hosts.
        let rest = bytes[bytes.index(after: colon)...]
        if !rest.starts(with: "//".utf8), candidate.contains(UInt8(ascii: ".")) { return nil }
        return String(decoding: candidate.map { $0 >= UInt8(ascii: "A") && $0 <= UInt8(ascii: "Z") ? $0 | 0x20 : $0 }, as: UTF8.self)
    }

    /// Makes control characters visible so an error never prints a raw CR/LF.
    static func visible(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined())
    }
}
