internal import Glibc

/// A set of origins (`scheme://host:port`, lower-case, default ports made explicit) and a cheap
/// byte-level test of whether a URL belongs to one of them.
///
/// The ``APIClient`` builds one from its base URL, the ``FailoverMiddleware`` mirrors and
/// ``ClientConfiguration/trustedOrigins``; built-in middleware consult it through
/// ``MiddlewareContext/trusts(_:)`` so a third-party URL (a CDN image) never receives the
/// client's `Authorization`, signature or common arguments.
package struct TrustedOrigins: Sendable, Hashable {
    /// The normalised origins.
    package let origins: Set<String>
    /// How URLs of these origins usually start (`http://host:port` and, for a default port,
    /// `http://host`), for a check without parsing on the hot path.
    private let prefixes: [[UInt8]]

    /// Creates the set from URLs or origins; anything that is not an http(s) URL is ignored.
    package init(_ urls: some Sequence<String>) {
        origins = Set(urls.compactMap(Self.origin(of:)))
        prefixes = origins.flatMap { origin -> [[UInt8]] in
            for suffix in [":443", ":80"] where origin.hasSuffix(suffix) {
                let isDefault = (suffix == ":443") == origin.hasPrefix("https:")
                if isDefault { return [Array(origin.utf8), Array(origin.utf8.dropLast(suffix.utf8.count))] }
            }
            return [Array(origin.utf8)]
        }
    }

    /// Whether the URL's origin is in the set.
    package func contains(_ url: String) -> Bool {
        guard !origins.isEmpty else { return false }
        // Compared with `memcmp`: the generic `elementsEqual` and `starts(with:)` go element by
        // element through iterators, and every URL-dependent middleware asks on every call.
        var bytes = url
        let prefixed = bytes.withUTF8 { url in
            prefixes.contains { expected in
                guard url.count >= expected.count, let base = url.baseAddress,
                    expected.withUnsafeBufferPointer({ $0.baseAddress.map { memcmp(base, $0, expected.count) == 0 } ?? false })
                else { return false }
                guard expected.count < url.count else { return true }
                let next = url[expected.count]
                return next == UInt8(ascii: "/") || next == UInt8(ascii: "?") || next == UInt8(ascii: "#")
            }
        }
        if prefixed { return true }
        guard let origin = Self.origin(of: url) else { return false }
        return origins.contains(origin)
    }

    /// `scheme://host:port` of an absolute http(s) URL, lower-cased, with the default port
    /// written out; `nil` for anything else. Works on bytes: no `URL` parsing per request.
    package static func origin(of url: String) -> String? {
        var utf8 = Array(url.utf8.prefix(512))
        for index in utf8.indices where utf8[index] >= UInt8(ascii: "A") && utf8[index] <= UInt8(ascii: "Z") {
            utf8[index] += 32
        }
        let scheme: String
        let defaultPort: String
        var start: Int
        if utf8.starts(with: "https://".utf8) {
            (scheme, defaultPort, start) = ("https", "443", 8)
        } else if utf8.starts(with: "http://".utf8) {
            (scheme, defaultPort, start) = ("http", "80", 7)
        } else {
            return nil
        }
        var end = start
        while end < utf8.count, utf8[end] != UInt8(ascii: "/"), utf8[end] != UInt8(ascii: "?"), utf8[end] != UInt8(ascii: "#") { end += 1 }
        // Drop user information: it is not part of the origin.
        if let at = utf8[start..<end].lastIndex(of: UInt8(ascii: "@")) { start = at + 1 }
        let authority = utf8[start..<end]
        guard !authority.isEmpty else { return nil }
        let hostEnd: Int
        if authority.first == UInt8(ascii: "[") {
            guard let close = authority.firstIndex(of: UInt8(ascii: "]")) else { return nil }
            hostEnd = close + 1
        } else {
            hostEnd = authority.firstIndex(of: UInt8(ascii: ":")) ?? end
        }
        let host = String(decoding: utf8[start..<hostEnd], as: UTF8.self)
        var port = hostEnd < end ? String(decoding: utf8[(hostEnd + 1)..<end], as: UTF8.self) : ""
        if port.isEmpty { port = defaultPort }
        return "\(scheme)://\(host):\(port)"
    }
}
