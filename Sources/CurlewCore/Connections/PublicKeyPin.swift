public import Foundation

/// The SHA-256 hash of a server's public key (its DER `SubjectPublicKeyInfo`), as
/// `CURLOPT_PINNEDPUBLICKEY` and HPKP spell it: `sha256//` and the hash in base64.
///
/// Compute one with `openssl x509 -in server.pem -pubkey -noout | openssl pkey -pubin -outform
/// der | openssl dgst -sha256 -binary | openssl base64`.
public struct PublicKeyPin: Sendable, Hashable, CustomStringConvertible {
    /// `sha256//` and the base64 hash.
    public let description: String

    /// A pin from its text form, `sha256//<base64 of 32 bytes>`; `nil` for anything else.
    public init?(_ text: String) {
        let prefix = "sha256//"
        guard text.hasPrefix(prefix) else { return nil }
        let encoded = String(text.dropFirst(prefix.count))
        guard let hash = Data(base64Encoded: encoded), hash.count == 32 else { return nil }
        self.description = prefix + hash.base64EncodedString()
    }

    /// A pin from the 32 bytes of a SHA-256 hash; `nil` for another length.
    public init?(sha256 hash: Data) {
        guard hash.count == 32 else { return nil }
        self.description = "sha256//" + hash.base64EncodedString()
    }
}
