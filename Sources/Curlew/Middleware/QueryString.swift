internal import Foundation

/// Reading and extending the query of an already-encoded URL (for middleware that add or sign
/// parameters after the request was prepared).
enum QueryString {
    /// The decoded query items of a URL, in order (`+` is a literal plus, as Curlew encodes spaces
    /// in queries as `%20`).
    static func items(of url: String) -> [(name: String, value: String)] {
        guard let start = url.firstIndex(of: "?") else { return [] }
        let end = url[start...].firstIndex(of: "#") ?? url.endIndex
        return pairs(String(url[url.index(after: start)..<end]), plusIsSpace: false)
    }

    /// Decoded `name=value` pairs of a query or form body.
    static func pairs(_ text: String, plusIsSpace: Bool) -> [(name: String, value: String)] {
        text.split(separator: "&").map { pair in
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            func decode(_ part: Substring) -> String {
                let text = plusIsSpace ? part.replacingOccurrences(of: "+", with: " ") : String(part)
                return text.removingPercentEncoding ?? text
            }
            return (decode(parts[0]), parts.count > 1 ? decode(parts[1]) : "")
        }
    }

    /// The URL with items appended to its query, RFC 3986 encoded.
    static func appending(_ items: [URLQueryItem], to url: String) -> String {
        guard !items.isEmpty else { return url }
        let fragmentStart = url.firstIndex(of: "#") ?? url.endIndex
        let base = url[..<fragmentStart]
        let separator = base.contains("?") ? (base.hasSuffix("?") || base.hasSuffix("&") ? "" : "&") : "?"
        return base + separator + PercentEncoding.query(items) + url[fragmentStart...]
    }
}

extension PreparedRequest {
    /// Replaces the URL and keeps the summary in step.
    mutating func setURL(_ url: String) {
        self.url = url
        self.summary = RequestSummary(method: method, url: url, secretKeyFragments: summary.secretKeyFragments)
    }
}
