/// How a ``ResponseCache`` learns whose answers it stores, so user B never gets user A's `/me`.
///
/// The cache runs outermost — before ``TokenRefreshMiddleware`` and ``AuthorizationMiddleware``
/// have looked at the credential — so it asks the same source they use. A request to one of the
/// client's trusted origins (the ones that receive the credential) made while an account is
/// logged in is stored under a digest of that account's identity (never the token itself);
/// other requests are stored as anonymous. A request that already carries an `Authorization` or
/// `Cookie` header (set by the endpoint) is also scoped by a digest of that header. A request
/// that requires authentication while nobody is logged in is never cached.
///
/// The account identity should survive a token refresh (a user id, the refresh token) so
/// refreshing keeps the user's entries; the default for a ``TokenStore`` is the refresh token,
/// or the access token when there is none.
public struct CacheCredentials: Sendable {
    /// The current account. Only its identity counts: a token refresh keeps the account (and
    /// its entries), a login as someone else or a logout changes it.
    struct Account: Sendable, Equatable {
        var identity: String
    }

    let current: @Sendable () async -> Account?

    /// No credentials are ever sent: every request is stored as anonymous (headers set by the
    /// endpoint still scope their requests).
    public static let anonymous = CacheCredentials(current: { nil })

    /// The account logged in to `store`; `account` names it (a user id you keep beside the token,
    /// or the default: refresh token, else access token). Only a digest enters the cache.
    public static func tokenStore(
        _ store: TokenStore, account: @escaping @Sendable (TokenStore.Credential) -> String = { $0.refreshToken ?? $0.accessToken }
    ) -> CacheCredentials {
        CacheCredentials {
            guard let (credential, _) = await store.current() else { return nil }
            return Account(identity: account(credential))
        }
    }

    /// The account your code reports (`nil` when logged out).
    public static func provider(_ account: @escaping @Sendable () async -> String?) -> CacheCredentials {
        CacheCredentials { await account().map { Account(identity: $0) } }
    }
}
