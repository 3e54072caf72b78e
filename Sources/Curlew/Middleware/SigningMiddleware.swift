public import Foundation
public import HTTPTypes
internal import Crypto

/// Signs every request over what is actually sent: the query parameters,
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
/// (``Endpoint/willSend(_:)``)
/// is computed once, when the request is prepared, and is resent
/// unchanged — use this middleware for signatures that cover timestamps or tokens.
///
/// Register it **last** so it runs innermost: it signs the final parameters, and every retry or
/// refresh re-signs. A signature sent as a header is never sent to another origin on a redirect
/// (see ``/CurlewCore/TransferOptions/originBoundHeaders``); a signature in the query is never copied to a
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
        /// A parameter with this name, placed where ``SigningMiddleware/placement`` says.
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
    /// When set, a Unix timestamp (seconds) is added as this parameter before signing.
    public var timestampParameter: String?
    /// When set, a random nonce is added as this parameter before signing.
    public var nonceParameter: String?
    /// Where the timestamp, the nonce and a signature parameter go: the query (default), or, like
    /// ``CommonArgumentsMiddleware/placement``, beside the request's own parameters in a form or
    /// JSON body. The signature covers them wherever they are: it is computed over the query, the
    /// added parameters and the form or JSON members together.
    public var placement: ParameterPlacement
    /// The clock for the timestamp (a ``ServerClock`` corrects for the server's offset).
    public var now: @Sendable () -> Date

    /// Creates the middleware.
    public init(
        secret: String, algorithm: Algorithm = .md5, output: Output = .parameter("sign"),
        timestampParameter: String? = nil, nonceParameter: String? = nil, placement: ParameterPlacement = .query,
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.secret = secret
        self.algorithm = algorithm
        self.output = output
        self.timestampParameter = timestampParameter
        self.nonceParameter = nonceParameter
        self.placement = placement
        self.now = now
    }

    /// `.signing`.
    public var kind: MiddlewareKind { .signing }

    /// ``MiddlewarePhase/signing``.
    public var phase: MiddlewarePhase? { .signing }

    /// Adds timestamp and nonce, computes the signature and attaches it.
    public nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        guard context.trusts(request.url) else { return try await next(request, context) }
        var request = request
        var added: [(name: String, value: String?)] = []
        added.reserveCapacity(3)
        if let timestampParameter { added.append((timestampParameter, String(Int(now().timeIntervalSince1970)))) }
        if let nonceParameter { added.append((nonceParameter, UUID().uuidString.lowercased())) }
        let (secret, algorithm) = (secret, algorithm)
        let signature: String
        // In the query they are appended, unless the URL carries them already (a redirect whose
        // `Location` repeats the signed query): then they are replaced, as beside body parameters.
        let appendsToQuery = placement == .query && !carriesOwnParameter(request.url)
        if appendsToQuery {
            // The signature covers them as if they were already in the URL, which is then
            // rewritten once, with them and the signature.
            signature = Self.signedPairs(of: request, adding: added).withCanonicalBytes {
                Self.signature(of: $0, secret: secret, algorithm: algorithm)
            }
        } else {
            // Beside the parameters (or in a query that has them) they replace the request's own of
            // the same name (they are computed for this attempt): placed first, so the signature
            // covers what is sent. A parameter named like the signature is replaced by it, so it is
            // not signed.
            if !added.isEmpty {
                try ParameterPlacer.place(sorted: added.map { (key: $0.name, value: $0.value ?? "") }, in: &request, at: placement, existing: .replace)
                added = []
            }
            var pairs = Self.signedPairs(of: request)
            if case .parameter(let name) = output { pairs.removeAll(named: name) }
            signature = pairs.withCanonicalBytes { Self.signature(of: $0, secret: secret, algorithm: algorithm) }
        }
        switch output {
        case .parameter(let name):
            added.append((name, signature))
        case .header(let name):
            request.headers[name] = signature
            request.options.originBoundHeaders.insert(name)
        }
        if !added.isEmpty {
            if appendsToQuery {
                request.replaceURL(QueryString.appending(added, to: request.url))
            } else {
                try ParameterPlacer.place(
                    sorted: added.map { (key: $0.name, value: $0.value ?? "") }, in: &request, at: placement, existing: .replace)
            }
        }
        return try await next(request, context)
    }

    /// Whether the URL's query already has the timestamp, the nonce or the signature parameter.
    private func carriesOwnParameter(_ url: String) -> Bool {
        if let timestampParameter, QueryString.hasItem(named: timestampParameter, in: url) { return true }
        if let nonceParameter, QueryString.hasItem(named: nonceParameter, in: url) { return true }
        if case .parameter(let name) = output, QueryString.hasItem(named: name, in: url) { return true }
        return false
    }

    /// `a=1&b=2` over the decoded query parameters, form fields and JSON object members, sorted by
    /// name then value (the canonical form above).
    public static func canonicalString(for request: PreparedRequest) -> String {
        String(decoding: canonicalBytes(for: request), as: UTF8.self)
    }

    /// ``canonicalString(for:)`` as UTF-8 bytes, what the signature is computed over.
    static func canonicalBytes(for request: PreparedRequest) -> [UInt8] {
        signedPairs(of: request).canonicalBytes()
    }

    /// The pairs a signature covers: the URL's query, `adding` (parameters not yet in the URL,
    /// signed as if they were), and a form or JSON object body.
    static func signedPairs(of request: PreparedRequest, adding: [(name: String, value: String?)] = []) -> SignedPairs {
        var pairs = SignedPairs()
        pairs.appendQuery(of: request.url)
        for (name, value) in adding { pairs.append(name: name, value: value ?? "") }
        if let body = request.content?.parameterBytes {
            switch ParameterPlacer.bodyKind(of: request) {
            case .form: pairs.appendForm(body)
            case .json: for (name, value) in jsonPairs(body) { pairs.append(name: name, value: value) }
            case nil: break
            }
        }
        return pairs
    }

    static func jsonPairs(_ body: Data) -> [(name: String, value: String)] {
        guard !body.isEmpty, let value = try? JSONValue(jsonData: body) else { return [] }
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
        signature(of: Array(canonical.utf8), secret: secret, algorithm: algorithm)
    }

    /// ``signature(of:secret:algorithm:)`` over the canonical form's bytes.
    static func signature(of canonical: [UInt8], secret: String, algorithm: Algorithm) -> String {
        canonical.withUnsafeBufferPointer { signature(of: $0, secret: secret, algorithm: algorithm) }
    }

    static func signature(of canonical: UnsafeBufferPointer<UInt8>, secret: String, algorithm: Algorithm) -> String {
        switch algorithm {
        case .md5:
            // Straight from the bytes: no `Data` copies.
            var hasher = Insecure.MD5()
            var secret = secret
            hasher.update(bufferPointer: UnsafeRawBufferPointer(canonical))
            secret.withUTF8 { hasher.update(bufferPointer: UnsafeRawBufferPointer($0)) }
            return hasher.finalize().withUnsafeBytes(hex)
        case .hmacSHA256:
            let key = SymmetricKey(data: Data(secret.utf8))
            return HMAC<SHA256>.authenticationCode(for: UnsafeRawBufferPointer(canonical), using: key).withUnsafeBytes(hex)
        }
    }

    private static func hex(_ bytes: UnsafeRawBufferPointer) -> String {
        let digits: StaticString = "0123456789abcdef"
        return digits.withUTF8Buffer { digits in
            String(unsafeUninitializedCapacity: 2 * bytes.count) { text in
                for (index, byte) in bytes.enumerated() {
                    text[2 * index] = digits[Int(byte >> 4)]
                    text[2 * index + 1] = digits[Int(byte & 0x0F)]
                }
                return 2 * bytes.count
            }
        }
    }
}
