/// The credential scope of one call (see ``CacheCredentials``).
struct Scope: Sendable {
    /// `public`, or `a:<digest>` and/or `h:<digest>` joined with `;`.
    var scope: String
    /// The account read before sending, compared again before storing.
    var account: CacheCredentials.Account?
    /// Whether the request goes to an origin that receives the client's credential.
    var trusted: Bool

    /// The scope for `request`, or `nil` when it must not be cached (it requires
    /// authentication and nobody is logged in).
    static func resolve(request: PreparedRequest, context: MiddlewareContext, credentials: CacheCredentials) async -> Scope? {
        var parts: [String] = []
        let trusted = context.trusts(request.url)
        var account: CacheCredentials.Account?
        if trusted, let current = await credentials.current() {
            account = current
            parts.append(CacheKey.accountScope(current.identity))
        }
        let sent = request.headers[values: .authorization] + request.headers[values: .cookie]
        if !sent.isEmpty {
            parts.append("h:" + CacheDigest.sha256("curlew.cache.header\u{0}" + sent.joined(separator: "\u{0}")))
        }
        if parts.isEmpty, context.requiresAuthentication { return nil }
        return Scope(scope: parts.isEmpty ? CacheKey.publicScope : parts.joined(separator: ";"), account: account, trusted: trusted)
    }

    /// Whether the account is still the one the request was scoped with (a login or logout
    /// during the exchange means the answer may belong to someone else: it is not stored).
    func isUnchanged(_ credentials: CacheCredentials) async -> Bool {
        guard trusted else { return true }
        return await credentials.current() == account
    }
}
