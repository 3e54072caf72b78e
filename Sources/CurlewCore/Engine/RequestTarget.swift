/// A request URL split for libcurl into the part it must parse and the request target it can send
/// as given (`CURLOPT_REQUEST_TARGET`).
///
/// libcurl parses the whole of `CURLOPT_URL` and then writes the query into the request line
/// through its `printf`, one byte per call (libcurl 7.88), so the bytes the common-arguments and
/// signing middleware add to the query cost it more than all of Curlew's own work for them
/// (BENCHMARKS.md has the measurement). Given the origin and path
/// as the URL and `path?query` as the request target, libcurl parses the short URL and copies the
/// target in one piece. The origin, the path (cookies match on it) and everything the connection
/// depends on are unchanged.
///
/// Only for requests whose request line libcurl writes in origin form: with a proxy that
/// forwards plain-HTTP requests (`http` URLs through an HTTP proxy, or a proxy only the
/// environment names) the request line must carry the whole URL, so those are left alone.
/// The client's redirect step sends every hop as a request of its own, so each is configured,
/// and split, afresh.
package struct RequestTarget: Equatable {
    package var url: String
    package var target: String

    /// Where the two parts lie in the URL's bytes.
    package struct Ranges: Equatable {
        /// The URL up to its `?`.
        package var url: Range<Int>
        /// Path and query, without a fragment.
        package var target: Range<Int>
        /// The path is empty: the target is `/` followed by ``target``.
        package var prependsSlash: Bool

        /// The number of bytes of the two NUL-terminated C strings.
        package var cStringLength: Int { url.count + target.count + (prependsSlash ? 1 : 0) + 2 }

        /// Writes the URL and the target as two NUL-terminated C strings into `out` (room for
        /// ``cStringLength`` bytes); returns the offset of the target.
        package func writeCStrings(of bytes: UnsafeBufferPointer<UInt8>, into out: UnsafeMutableBufferPointer<UInt8>) -> Int {
            var position = UnsafeMutableBufferPointer(rebasing: out[...]).initialize(fromContentsOf: UnsafeBufferPointer(rebasing: bytes[url]))
            out.initializeElement(at: position, to: 0)
            let targetStart = position + 1
            position = targetStart
            if prependsSlash {
                out.initializeElement(at: position, to: UInt8(ascii: "/"))
                position += 1
            }
            position += UnsafeMutableBufferPointer(rebasing: out[position...]).initialize(fromContentsOf: UnsafeBufferPointer(rebasing: bytes[target]))
            out.initializeElement(at: position, to: 0)
            return targetStart
        }
    }

    package static func split(_ url: String) -> RequestTarget? {
        var url = url
        return url.withUTF8 { bytes -> RequestTarget? in
            guard let ranges = split(bytes) else { return nil }
            let target = String(decoding: UnsafeBufferPointer(rebasing: bytes[ranges.target]), as: UTF8.self)
            return RequestTarget(
                url: String(decoding: UnsafeBufferPointer(rebasing: bytes[ranges.url]), as: UTF8.self),
                target: ranges.prependsSlash ? "/" + target : target)
        }
    }

    /// Where `url` splits, `nil` unless it is an http or https URL with a query.
    package static func ranges(of url: String) -> Ranges? {
        var url = url
        return url.withUTF8 { split($0) }
    }

    package static func split(_ bytes: UnsafeBufferPointer<UInt8>) -> Ranges? {
        guard let question = bytes.firstIndex(ofByte: UInt8(ascii: "?")) else { return nil }
        let authorityStart: Int
        if bytes.hasPrefix("http://") {
            authorityStart = 7
        } else if bytes.hasPrefix("https://") {
            authorityStart = 8
        } else {
            return nil
        }
        // A "?" inside the fragment is no query.
        guard bytes.firstIndex(ofByte: UInt8(ascii: "#"), in: 0..<question) == nil else { return nil }
        // The path starts at the first "/" after the scheme; none before the "?" means an
        // empty path, sent as "/".
        var pathStart = authorityStart
        while pathStart < question, bytes[pathStart] != UInt8(ascii: "/") { pathStart += 1 }
        let end = bytes.firstIndex(ofByte: UInt8(ascii: "#"), in: question..<bytes.count) ?? bytes.count
        // The target goes into the request line as it is: one with a space or a control
        // character (CR LF would start a header of its own) is not split, and libcurl, which
        // checks a whole URL, refuses it.
        for byte in bytes[pathStart..<end] where byte <= 0x20 || byte == 0x7F { return nil }
        // Path and query are contiguous in the URL.
        return Ranges(url: 0..<question, target: pathStart..<end, prependsSlash: pathStart == question)
    }
}

extension ProxyConfiguration {
    /// Whether libcurl writes the request line in origin form (`GET /path?query`) for a URL of
    /// this scheme: no proxy, a SOCKS proxy, or an HTTP proxy that tunnels (`https` URLs). An
    /// HTTP proxy forwarding an `http` URL needs the whole URL, and for `.environment` only
    /// libcurl knows which proxy applies.
    package func sendsOriginForm(https: Bool) -> Bool {
        switch mode {
        case .direct: true
        case .environment: false
        case .server(let server): server.kind == .socks5 || https
        }
    }
}
