/// A request URL split for libcurl into the part it must parse and the request target it can send
/// as given (`CURLOPT_REQUEST_TARGET`).
///
/// libcurl parses the whole of `CURLOPT_URL` and then writes the query into the request line
/// through its `printf`, one byte per call: about 375 instructions per query byte on libcurl
/// 7.88, so the 64 bytes the common-arguments and signing middleware add cost it some 24k
/// instructions a request, more than all of Curlew's own work for them. Given the origin and path
/// as the URL and `path?query` as the request target, libcurl parses the short URL and copies the
/// target in one piece. The origin, the path (cookies match on it) and everything the connection
/// depends on are unchanged.
///
/// Only for requests whose request line libcurl writes in origin form: with a proxy that
/// forwards plain-HTTP requests (`http` URLs through an HTTP proxy, or a proxy only the
/// environment names) the request line must carry the whole URL, so those are left alone.
/// Curlew follows redirects itself, so every hop is configured, and split, afresh.
struct RequestTarget: Equatable {
    /// The URL up to the query: scheme, authority and path.
    var url: String
    /// `path?query`, without a fragment.
    var target: String

    /// The split of `url`, or `nil` when it has no query (nothing to save) or is not absolute
    /// `http(s)://`.
    static func split(_ url: String) -> RequestTarget? {
        var url = url
        return url.withUTF8 { bytes -> RequestTarget? in
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
            let prefix = String(decoding: UnsafeBufferPointer(rebasing: bytes[..<question]), as: UTF8.self)
            // Path and query are contiguous in the URL: one string, unless the path is empty.
            let target = String(decoding: UnsafeBufferPointer(rebasing: bytes[pathStart..<end]), as: UTF8.self)
            return RequestTarget(url: prefix, target: pathStart == question ? "/" + target : target)
        }
    }
}

extension ProxyConfiguration {
    /// Whether libcurl writes the request line in origin form (`GET /path?query`) for a URL of
    /// this scheme: no proxy, a SOCKS proxy, or an HTTP proxy that tunnels (`https` URLs). An
    /// HTTP proxy forwarding an `http` URL needs the whole URL, and for `.environment` only
    /// libcurl knows which proxy applies.
    func sendsOriginForm(https: Bool) -> Bool {
        switch mode {
        case .direct: true
        case .environment: false
        case .server(let server): server.kind == .socks5 || https
        }
    }
}
