public import HTTPTypes

/// A request as it appears in errors and logs: method and URL, with the values of secret-looking
/// query parameters replaced by `<redacted>`. Header values are never part of it.
public struct RequestSummary: Sendable, Hashable, CustomStringConvertible {
    /// The request's method.
    public var method: HTTPRequest.Method
    /// The URL as sent; private so only the redacted form can be read.
    private let url: String
    /// Which query keys are secret.
    package let secretKeyFragments: Set<String>

    /// The URL with secret query values and user info redacted. Computed on demand: summaries are
    /// made for every request but read only for errors and logs.
    public var redactedURL: String { Self.redact(url: url, secretKeyFragments: secretKeyFragments) }

    /// The URL as sent, for decisions inside the package (whose origin answered), never printed.
    package var sentURL: String { url }

    /// Query keys whose values are redacted when they contain one of these fragments
    /// (compared case-insensitively).
    public static let defaultSecretKeyFragments: Set<String> = [
        "token", "secret", "password", "passwd", "signature", "sign", "auth", "apikey", "api_key",
        "session", "credential", "private",
    ]

    /// Creates a summary, redacting query values whose key contains a secret fragment.
    /// - Parameters:
    ///   - method: The request method.
    ///   - url: The absolute URL as sent.
    ///   - secretKeyFragments: Lower-case fragments that mark a query key as secret.
    public init(method: HTTPRequest.Method, url: String, secretKeyFragments: Set<String> = Self.defaultSecretKeyFragments) {
        self.method = method
        self.url = url
        self.secretKeyFragments = secretKeyFragments
    }

    /// Summaries are equal when they print the same.
    public static func == (lhs: RequestSummary, rhs: RequestSummary) -> Bool {
        lhs.description == rhs.description
    }

    /// Hashes what the summary prints.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(description)
    }

    /// `"GET http://host/path?token=<redacted>"`.
    public var description: String { "\(method.rawValue) \(redactedURL)" }

    package static func redact(url: String, secretKeyFragments: Set<String>) -> String {
        guard let queryStart = url.firstIndex(of: "?") else { return Self.stripUserInfo(url) }
        let fragmentStart = url[queryStart...].firstIndex(of: "#") ?? url.endIndex
        let query = url[url.index(after: queryStart)..<fragmentStart]
        let redacted = query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let key = pair[..<equals].lowercased()
            let isSecret = secretKeyFragments.contains { key.contains($0) }
            return isSecret ? "\(pair[..<equals])=<redacted>" : String(pair)
        }.joined(separator: "&")
        return Self.stripUserInfo(String(url[..<queryStart])) + "?" + redacted + url[fragmentStart...]
    }

    /// Removes `user:password@` from the authority, which must never be printed.
    package static func stripUserInfo(_ url: String) -> String {
        guard let schemeEnd = url.range(of: "://") else { return url }
        let authorityStart = schemeEnd.upperBound
        let authorityEnd = url[authorityStart...].firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? url.endIndex
        guard let at = url[authorityStart..<authorityEnd].lastIndex(of: "@") else { return url }
        return String(url[..<authorityStart]) + "<redacted>@" + url[url.index(after: at)...]
    }
}
