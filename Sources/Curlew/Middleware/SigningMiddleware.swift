public import Foundation
public import HTTPTypes
internal import Crypto

/// Signs every request over what is actually sent (HAccess's signing): the query parameters and
/// URL-encoded form fields, sorted by name, joined as `a=1&b=2`, followed by the secret, hashed
/// with MD5 (the seed's scheme) or HMAC-SHA256 (keyed with the secret), as lower-case hex.
///
/// Register it **last** so it runs innermost: it signs the final parameters, and every retry or
/// refresh re-signs. A signature sent as a header is never sent to another origin on a redirect
/// (see ``TransferOptions/originBoundHeaders``); a signature in the query is never copied to a
/// redirect's URL.
///
/// ```swift
/// SigningMiddleware(secret: "123456", algorithm: .md5, output: .parameter("sign"),
///                   timestampParameter: "ts")
/// ```
public struct SigningMiddleware: APIMiddleware {
    /// The hash.
    public enum Algorithm: Sendable, Hashable {
        /// `md5(canonical + secret)`.
        case md5
        /// `HMAC-SHA256(key: secret, canonical)`.
        case hmacSHA256
    }

    /// Where the signature goes.
    public enum Output: Sendable, Hashable {
        /// A query parameter with this name.
        case parameter(String)
        /// A header with this name.
        case header(HTTPField.Name)
    }

    /// The shared secret.
    public var secret: String
    /// The hash.
    public var algorithm: Algorithm
    /// Where the signature goes.
    public var output: Output
    /// When set, a Unix timestamp (seconds) is added as this query parameter before signing.
    public var timestampParameter: String?
    /// When set, a random nonce is added as this query parameter before signing.
    public var nonceParameter: String?
    /// The clock for the timestamp (a ``ServerClock`` corrects for the server's offset).
    public var now: @Sendable () -> Date

    /// Creates the middleware.
    public init(
        secret: String, algorithm: Algorithm = .md5, output: Output = .parameter("sign"),
        timestampParameter: String? = nil, nonceParameter: String? = nil,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.secret = secret
        self.algorithm = algorithm
        self.output = output
        self.timestampParameter = timestampParameter
        self.nonceParameter = nonceParameter
        self.now = now
    }

    /// `.signing`.
    public var kind: MiddlewareKind { .signing }

    /// ``MiddlewarePhase/signing``.
    public var phase: MiddlewarePhase? { .signing }

    /// Adds timestamp and nonce, computes the signature and attaches it.
    public func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        guard context.trusts(request.url) else { return try await next(request, context) }
        var request = request
        var added: [(name: String, value: String?)] = []
        if let timestampParameter { added.append((timestampParameter, String(Int(now().timeIntervalSince1970)))) }
        if let nonceParameter { added.append((nonceParameter, UUID().uuidString.lowercased())) }
        if !added.isEmpty { request.setURL(QueryString.appending(added, to: request.url)) }
        let signature = Self.signature(of: Self.canonicalString(for: request), secret: secret, algorithm: algorithm)
        switch output {
        case .parameter(let name):
            request.setURL(QueryString.appending([(name: name, value: Optional(signature))], to: request.url))
        case .header(let name):
            request.headers[name] = signature
            request.options.originBoundHeaders.insert(name)
        }
        return try await next(request, context)
    }

    /// `a=1&b=2` over the decoded query parameters and form fields, sorted by name then value.
    public static func canonicalString(for request: PreparedRequest) -> String {
        var pairs = QueryString.items(of: request.url)
        if let body = request.body, request.headers[.contentType]?.hasPrefix("application/x-www-form-urlencoded") == true {
            pairs += QueryString.pairs(String(decoding: body, as: UTF8.self), plusIsSpace: true)
        }
        pairs.sort { ($0.name, $0.value) < ($1.name, $1.value) }
        var canonical = ""
        canonical.reserveCapacity(pairs.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 2 })
        for (index, pair) in pairs.enumerated() {
            if index > 0 { canonical += "&" }
            canonical += pair.name
            canonical += "="
            canonical += pair.value
        }
        return canonical
    }

    /// The lower-case hex signature of a canonical string.
    public static func signature(of canonical: String, secret: String, algorithm: Algorithm) -> String {
        switch algorithm {
        case .md5:
            var hasher = Insecure.MD5()
            hasher.update(data: Data(canonical.utf8))
            hasher.update(data: Data(secret.utf8))
            return hex(hasher.finalize())
        case .hmacSHA256:
            let key = SymmetricKey(data: Data(secret.utf8))
            return hex(HMAC<SHA256>.authenticationCode(for: Data(canonical.utf8), using: key))
        }
    }

    private static func hex(_ bytes: some Sequence<UInt8>) -> String {
        let digits: StaticString = "0123456789abcdef"
        var text: [UInt8] = []
        text.reserveCapacity(64)
        digits.withUTF8Buffer { digits in
            for byte in bytes {
                text.append(digits[Int(byte >> 4)])
                text.append(digits[Int(byte & 0x0F)])
            }
        }
        return String(decoding: text, as: UTF8.self)
    }
}
