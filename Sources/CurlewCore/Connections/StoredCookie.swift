public import Foundation

/// One cookie in a ``CookieJar``, as libcurl's cookie engine keeps it.
///
/// Its ``description`` leaves the value out: cookie values are usually session secrets.
public struct StoredCookie: Sendable, Hashable, CustomStringConvertible {
    /// The domain it is sent to, without a leading dot.
    public var domain: String
    /// Whether subdomains of ``domain`` receive it too (a `Domain` attribute was given).
    public var includesSubdomains: Bool
    /// The path prefix it is sent to.
    public var path: String
    /// Whether it is sent over https only (`Secure`).
    public var isSecure: Bool
    /// Whether the server marked it `HttpOnly` (not for scripts; an HTTP client sends it).
    public var isHTTPOnly: Bool
    /// When it expires; `nil` for a session cookie.
    public var expires: Date?
    /// Its name.
    public var name: String
    /// Its value.
    public var value: String

    /// Name, domain, path and flags — never the value.
    public var description: String {
        "\(name) for \(includesSubdomains ? "." : "")\(domain)\(path)\(isSecure ? " Secure" : "")\(isHTTPOnly ? " HttpOnly" : "")"
    }

    /// Parses one line of libcurl's Netscape cookie format (`CURLINFO_COOKIELIST`): seven
    /// tab-separated fields, the domain prefixed `#HttpOnly_` for an `HttpOnly` cookie.
    package init?(netscapeLine line: Substring) {
        let fields = line.split(separator: "\t", omittingEmptySubsequences: false)
        guard fields.count == 7 else { return nil }
        var domain = fields[0]
        let httpOnlyPrefix = "#HttpOnly_"
        isHTTPOnly = domain.hasPrefix(httpOnlyPrefix)
        if isHTTPOnly { domain = domain.dropFirst(httpOnlyPrefix.count) }
        if domain.hasPrefix(".") { domain = domain.dropFirst() }
        guard !domain.isEmpty, let seconds = Int64(fields[4]) else { return nil }
        self.domain = String(domain)
        includesSubdomains = fields[1] == "TRUE"
        path = String(fields[2])
        isSecure = fields[3] == "TRUE"
        expires = seconds == 0 ? nil : Date(timeIntervalSince1970: TimeInterval(seconds))
        name = String(fields[5])
        value = String(fields[6])
    }
}
