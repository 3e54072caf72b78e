public import Foundation

/// A certificate and private key presented to servers that ask for one (mutual TLS), from PEM
/// files or from PEM bytes in memory.
///
/// Its descriptions never show the key or its password.
public struct ClientCertificate: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    package enum Material: Sendable, Hashable {
        case files(certificate: String, privateKey: String?)
        case pem(certificate: Data, privateKey: Data?)
    }

    package let material: Material
    /// The password of an encrypted private key.
    package let password: String?

    /// A certificate and key in PEM files (`CURLOPT_SSLCERT`, `CURLOPT_SSLKEY`).
    /// - Parameters:
    ///   - certificate: The certificate (chain) file.
    ///   - privateKey: The key file; `nil` when the certificate file also holds the key.
    ///   - password: The password of an encrypted key.
    public static func files(certificate: String, privateKey: String? = nil, password: String? = nil) -> ClientCertificate {
        ClientCertificate(material: .files(certificate: certificate, privateKey: privateKey), password: password)
    }

    /// A certificate and key as PEM bytes (`CURLOPT_SSLCERT_BLOB`, `CURLOPT_SSLKEY_BLOB`), for
    /// credentials read from a secret store; libcurl copies them.
    /// - Parameters:
    ///   - certificate: The certificate (chain) in PEM.
    ///   - privateKey: The key in PEM; `nil` when `certificate` also holds the key.
    ///   - password: The password of an encrypted key.
    public static func pem(certificate: Data, privateKey: Data? = nil, password: String? = nil) -> ClientCertificate {
        ClientCertificate(material: .pem(certificate: certificate, privateKey: privateKey), password: password)
    }

    /// Names the source, never the key or the password.
    public var description: String {
        switch material {
        case .files(let certificate, _): "ClientCertificate(file: \(certificate))"
        case .pem(let certificate, _): "ClientCertificate(pem: \(certificate.count) bytes)"
        }
    }

    /// The same as ``description``, so `dump()` shows no secret either.
    public var customMirror: Mirror { Mirror(self, children: ["source": description]) }
}
