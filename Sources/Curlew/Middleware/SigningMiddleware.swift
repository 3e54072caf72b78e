public import Foundation
public import HTTPTypes
internal import Crypto

/// Signs every request over what is actually sent (HAccess's signing): the query parameters,
/// URL-encoded form fields and the members of a JSON object body, sorted by name, joined as
/// `a=1&b=2`, followed by the secret, hashed with MD5 (the seed's scheme) or HMAC-SHA256 (keyed
/// with the secret), as lower-case hex.
///
/// The canonical form of a JSON body (`application/json` or `+json`) whose top level is an
/// object: each member is one `name=value` pair, where a string is its text unquoted and
/// unescaped, a number, `true`, `false` or `null` is its JSON text, and an object or array is its
/// compact JSON with keys sorted by their UTF-8 bytes. `{"q":"fog","page":2,"f":{"b":1,"a":[true]}}`
/// with query `ts=9` gives `f={"a":[true],"b":1}&page=2&q=fog&ts=9`. A JSON body that is not an
/// object contributes `body=<its compact JSON>`.
///
/// Only this middleware re-signs: it runs on every attempt (retry, token refresh, a request
/// released from a hold). A signature computed in an endpoint's own hooks
/// (``Endpoint/setUpParameters(_:)``, ``Endpoint/willSend(_:)``, HAccess's
/// `willSendRequest:…params:`) is computed once, when the request is prepared, and is resent
/// unchanged — use this middleware for signatures that cover timestamps or tokens.
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

    /// `a=1&b=2` over the decoded query parameters, form fields and JSON object members, sorted by
    /// name then value (the canonical form above).
    public static func canonicalString(for request: PreparedRequest) -> String {
        var pairs = QueryString.items(of: request.url)
        if let body = request.body {
            switch ParameterPlacer.bodyKind(of: request) {
            case .form: pairs += QueryString.pairs(String(decoding: body, as: UTF8.self), plusIsSpace: true)
            case .json: pairs += jsonPairs(body)
            case nil: break
            }
        }
        pairs.sort { ($0.name, $0.value) < ($1.name, $1.value) }
        // Built as bytes: one buffer, no `String.append` per piece.
        var canonical: [UInt8] = []
        canonical.reserveCapacity(pairs.reduce(0) { $0 + $1.name.utf8.count + $1.value.utf8.count + 2 })
        for (index, pair) in pairs.enumerated() {
            if index > 0 { canonical.append(UInt8(ascii: "&")) }
            canonical.append(contentsOf: pair.name.utf8)
            canonical.append(UInt8(ascii: "="))
            canonical.append(contentsOf: pair.value.utf8)
        }
        return String(decoding: canonical, as: UTF8.self)
    }

    /// The pairs a JSON body contributes (see the canonical form above).
    static func jsonPairs(_ body: Data) -> [(name: String, value: String)] {
        guard !body.isEmpty, let value = try? JSONDecoder().decode(JSONValue.self, from: body) else { return [] }
        func text(_ value: JSONValue) -> String {
            if case .string(let string) = value { return string }
            var writer = JSONWriter(sortedKeys: true)
            writer.write(value)
            return String(decoding: writer.bytes, as: UTF8.self)
        }
        guard case .object(let members) = value else { return [("body", text(value))] }
        return members.map { ($0.key, text($0.value)) }
    }

    /// The lower-case hex signature of a canonical string.
    public static func signature(of canonical: String, secret: String, algorithm: Algorithm) -> String {
        switch algorithm {
        case .md5:
            // Straight from the strings' bytes: no `Data` copies.
            var hasher = Insecure.MD5()
            var canonical = canonical, secret = secret
            canonical.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
            secret.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
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
