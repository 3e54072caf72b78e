package import HTTPTypes

/// The request's header fields as libcurl `CURLOPT_HTTPHEADER` lines, written as HTTP/1.1 needs
/// them.
///
/// - An empty value is sent as `Name:` with nothing after it; libcurl reads a plain `Name:` as
///   "remove this header", so the line is given in its `Name;` form, which libcurl sends as
///   `Name:`.
/// - `Cookie` fields, which swift-http-types splits into one field per cookie (the HTTP/2
///   convention, RFC 9113 §8.2.3), are joined with `"; "` into one line: HTTP/1.1 allows a single
///   `Cookie` line (RFC 6265 §5.4). Every other repeated field is a list whose lines a server
///   joins with `", "` (RFC 9110 §5.3), so each stays its own line. (swift-http-types combines no
///   other field, and splits only `Cookie`.) Over HTTP/2 libcurl splits the joined line again.
///
/// With a cookie jar, libcurl writes a `Cookie` line of its own from the jar, so the request's
/// cookies go to `CURLOPT_COOKIE` instead (``cookieValue(in:)``), which libcurl appends to that
/// line: still one line.
package enum HeaderLines {
    /// Calls `body` with each line, in order (the joined `Cookie` line last, unless `cookies` is
    /// false); returns whether a `Content-Type` field was among them.
    package static func forEach(in fields: HTTPFields, cookies includesCookies: Bool = true, _ body: (String) -> Void) -> Bool {
        var hasContentType = false
        var cookies: String?
        for field in fields {
            if field.name == .cookie {
                guard includesCookies, !field.value.isEmpty else { continue }
                cookies = cookies.map { $0 + "; " + field.value } ?? field.value
                continue
            }
            if field.name == .contentType { hasContentType = true }
            body(field.value.isEmpty ? "\(field.name.rawName);" : "\(field.name.rawName): \(field.value)")
        }
        if let cookies { body("Cookie: " + cookies) }
        return hasContentType
    }

    /// The request's `Cookie` fields joined with `"; "`, `nil` for none.
    package static func cookieValue(in fields: HTTPFields) -> String? {
        let values = fields[values: .cookie].filter { !$0.isEmpty }
        return values.isEmpty ? nil : values.joined(separator: "; ")
    }
}
