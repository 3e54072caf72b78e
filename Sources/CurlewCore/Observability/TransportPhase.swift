package import CCurlShim

extension CurlewError {
    /// Where in the exchange a transport failure happened, for ``CurlewError/transportPhase``.
    ///
    /// Derived from libcurl's result code when it names the phase (`CURLE_COULDNT_RESOLVE_HOST`,
    /// `CURLE_COULDNT_CONNECT`, a TLS error, `CURLE_SEND_ERROR`, `CURLE_RECV_ERROR`), otherwise
    /// (timeouts, resets, Curlew's own idle timeout) from the timings libcurl recorded: the last
    /// milestone reached tells which phase was running.
    public struct TransportPhase: Hashable, Sendable, CustomStringConvertible {
        /// The phase's name, e.g. `"connect"`.
        public let name: String
        private init(_ name: String) { self.name = name }

        /// Resolving the host name.
        public static let dns = TransportPhase("dns")
        /// Establishing the TCP connection.
        public static let connect = TransportPhase("connect")
        /// The TLS handshake, certificate verification included.
        public static let tls = TransportPhase("tls")
        /// Sending the request or waiting for the first response byte.
        public static let send = TransportPhase("send")
        /// Receiving the response, after its first byte.
        public static let receive = TransportPhase("receive")

        /// The phase's name.
        public var description: String { name }
    }
}

extension CurlewError.TransportPhase {
    /// The phase of a failed transfer from its libcurl code (when that names one) and timings.
    package static func infer(curlCode: CURLcode?, metrics: TransferMetrics?, isTLS: Bool) -> CurlewError.TransportPhase? {
        if let curlCode {
            switch curlCode {
            case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: return .dns
            case CURLE_COULDNT_CONNECT: return .connect
            case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
                CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR,
                CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_CRL_BADFILE, CURLE_SSL_INVALIDCERTSTATUS:
                return .tls
            case CURLE_SEND_ERROR: return .send
            case CURLE_RECV_ERROR, CURLE_PARTIAL_FILE, CURLE_FILESIZE_EXCEEDED, CURLE_WRITE_ERROR: return .receive
            default: break
            }
        }
        guard let metrics else { return nil }
        return fromTimings(metrics, isTLS: isTLS)
    }

    /// The phase after the last milestone the timings show (a reused connection has no DNS,
    /// connect or TLS time but a pre-transfer time).
    package static func fromTimings(_ metrics: TransferMetrics, isTLS: Bool) -> CurlewError.TransportPhase {
        if metrics.firstByte > .zero { return .receive }
        if metrics.pretransfer > .zero || metrics.reusedConnection { return .send }
        if isTLS, metrics.connect > .zero { return .tls }
        if metrics.nameLookup > .zero { return .connect }
        return .dns
    }
}
