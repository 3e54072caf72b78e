internal import Foundation
internal import HTTPTypes

/// Builds and validates the absolute URL of a request from the base URL, path and query items.
struct RequestURLBuilder {
    let baseURL: String?
    let path: String
    let query: [URLQueryItem]
    let method: HTTPRequest.Method

    func build() throws(CurlewError) -> String {
        let summaryURL = (baseURL ?? "") + path
        func fail(_ code: CurlewError.Code, _ message: String) -> CurlewError {
            CurlewError(code: code, message: message, request: RequestSummary(method: method, url: Self.visible(summaryURL)))
        }
        if path.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw fail(.invalidPath, "the path contains CR, LF, NUL or another control character")
        }
        var url: String
        if let scheme = Self.scheme(of: path) {
            guard scheme == "http" || scheme == "https" else {
                throw fail(.unsupportedScheme, "scheme \"\(scheme)\" is not supported; use http or https")
            }
            url = PercentEncoding.path(path)
        } else {
            guard let baseURL, !baseURL.isEmpty else {
                throw fail(.malformedURL, "the path is relative and the client has no base URL")
            }
            if baseURL.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
                throw fail(.malformedURL, "the base URL contains a control character")
            }
            var base = Substring(baseURL)
            while base.hasSuffix("/") { base = base.dropLast() }
            var relative = Substring(path)
            while relative.hasPrefix("/") { relative = relative.dropFirst() }
            url = relative.isEmpty ? String(base) : String(base) + "/" + PercentEncoding.path(String(relative))
        }
        if !query.isEmpty {
            let encoded = PercentEncoding.query(query)
            url += url.contains("?") ? "&" + encoded : "?" + encoded
        }
        try Self.validateAbsolute(url, method: method)
        return url
    }

    /// Checks that a URL is absolute http(s) with a host and no control characters.
    static func validateAbsolute(_ url: String, method: HTTPRequest.Method) throws(CurlewError) {
        let summary = RequestSummary(method: method, url: visible(url))
        if url.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F || $0 == " " }) {
            throw CurlewError(code: .invalidPath, message: "the URL contains a space or control character", request: summary)
        }
        guard let scheme = scheme(of: url) else {
            throw CurlewError(code: .malformedURL, message: "the URL has no scheme", request: summary)
        }
        guard scheme == "http" || scheme == "https" else {
            throw CurlewError(code: .unsupportedScheme, message: "scheme \"\(scheme)\" is not supported; use http or https", request: summary)
        }
        guard let components = URLComponents(string: url), let host = components.host, !host.isEmpty else {
            throw CurlewError(code: .malformedURL, message: "the URL is malformed or has no host", request: summary)
        }
    }

    /// The lower-cased scheme when the string starts with `scheme:`, `nil` for relative paths.
    static func scheme(of text: String) -> String? {
        guard let colon = text.firstIndex(of: ":") else { return nil }
        let candidate = text[..<colon]
        guard let first = candidate.first, first.isASCII, first.isLetter,
            candidate.allSatisfy({ $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "+" || $0 == "-" || $0 == ".") })
        else { return nil }
        // "localhost:8080/x" is not a scheme; require "//" after schemes that look like hosts.
        let rest = text[text.index(after: colon)...]
        if !rest.hasPrefix("//"), candidate.contains(".") { return nil }
        return candidate.lowercased()
    }

    /// Makes control characters visible so an error never prints a raw CR/LF.
    static func visible(_ text: String) -> String {
        String(text.unicodeScalars.map { $0.value < 0x20 || $0.value == 0x7F ? "\\u{\(String($0.value, radix: 16))}" : String($0) }.joined())
    }
}
