/// Where a ``TokenStore`` persists its credential (a keychain item, an encrypted file): the app
/// implements it, the store calls it. ``loadCredential()`` runs once when the store is created;
/// ``saveCredential(_:)`` runs on every change, with `nil` after a logout or a session end.
///
/// ```swift
/// final class KeychainTokens: CredentialStorage {
///     func loadCredential() -> TokenStore.Credential? { … }
///     func saveCredential(_ credential: TokenStore.Credential?) { … }
/// }
/// let store = TokenStore(storage: KeychainTokens())
/// ```
///
/// Both run on the store's actor: keep them quick and do not call back into the store.
public protocol CredentialStorage: Sendable {
    /// The saved credential, or `nil` when logged out.
    func loadCredential() -> TokenStore.Credential?
    /// Saves a new credential, or forgets it (`nil`).
    func saveCredential(_ credential: TokenStore.Credential?)
}
