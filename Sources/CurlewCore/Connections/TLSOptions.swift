/// What TLS trusts and presents: the roots a server certificate must chain to, whether it is
/// verified at all, a client certificate for mutual TLS, and the public keys a server may use.
///
/// A failed verification is a ``CurlewError`` whose code says what was wrong:
/// ``CurlewError/Code/tlsCertificateUntrusted`` (self-signed, unknown issuer),
/// ``CurlewError/Code/tlsCertificateExpired``, ``CurlewError/Code/tlsHostnameMismatch`` or
/// ``CurlewError/Code/tlsPinMismatch``.
///
/// (Not named `TLSConfiguration`, so that server code importing NIOSSL too has no ambiguity.)
public struct TLSOptions: Sendable, Hashable {
    /// The certificates a server's chain must end at. Default: the system's bundle.
    public var trustRoots: TrustRoots = .system
    /// Whether the server's certificate and host name are verified. `false` is for a development
    /// server only: a connection made without verification is never reused by a request that
    /// verifies (libcurl pools connections by their TLS settings).
    public var verifiesPeer = true
    /// The certificate and key presented when the server asks for one (mutual TLS).
    public var clientCertificate: ClientCertificate?
    /// Public keys the server may present, any one of them (several for a key rotation); empty
    /// for no pinning. Checked in addition to certificate verification.
    public var pinnedPublicKeys: [PublicKeyPin] = []

    /// Creates a configuration: verified against the system's roots, no client certificate, no pins.
    public init() {}
}
