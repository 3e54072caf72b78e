public import Foundation

extension TLSOptions {
    /// The certificate authorities a server's certificate must chain to.
    public struct TrustRoots: Sendable, Hashable {
        package enum Source: Sendable, Hashable {
            case system
            case file(String)
            case pem(Data)
        }

        package let source: Source

        /// The system's bundle (on Debian and Ubuntu `/etc/ssl/certs/ca-certificates.crt`), or
        /// ``TransferOptions/caBundlePath`` when that is set.
        public static let system = TrustRoots(source: .system)

        /// Only the certificates in a PEM file (`CURLOPT_CAINFO`); the system's roots are not
        /// trusted. For a private certificate authority, or a self-signed development server.
        public static func file(_ path: String) -> TrustRoots { TrustRoots(source: .file(path)) }

        /// Only the certificates in these PEM bytes (`CURLOPT_CAINFO_BLOB`), for a root that
        /// comes from a secret store rather than a file; the system's roots are not trusted.
        public static func pem(_ bytes: Data) -> TrustRoots { TrustRoots(source: .pem(bytes)) }
    }
}
