package import CCurlShim

/// Refines the code of a failed exchange from what libcurl recorded about its connection: which
/// certificate check failed (`CURLINFO_SSL_VERIFYRESULT`, OpenSSL's verification result), a pin
/// mismatch, an unusable client certificate, and a proxy's refusal (`CURLINFO_HTTP_CONNECTCODE`,
/// the status of the answer to `CONNECT`). By what happened, never by message text.
package enum CurlConnectionDiagnosis {
    /// OpenSSL's `X509_V_ERR_*` values (stable across OpenSSL versions).
    private enum VerifyResult {
        static let unableToGetIssuer = 2, notYetValid = 9, expired = 10
        static let selfSigned = 18, selfSignedInChain = 19, unableToGetIssuerLocally = 20
        static let unableToVerifyLeaf = 21, untrusted = 27, hostnameMismatch = 62
    }

    /// A more precise code for a failed exchange, `nil` to keep the general mapping's.
    package static func code(for result: CURLcode, handle: UnsafeMutableRawPointer) -> (CurlewError.Code, String?)? {
        var connectCode = 0
        _ = curlew_easy_getinfo_long(handle, CURLINFO_HTTP_CONNECTCODE, &connectCode)
        if connectCode != 0, !(200..<300).contains(connectCode) {
            return (.proxyFailure, "the proxy answered CONNECT with status \(connectCode)")
        }
        switch result {
        case CURLE_PEER_FAILED_VERIFICATION:
            var verify = 0
            _ = curlew_easy_getinfo_long(handle, CURLINFO_SSL_VERIFYRESULT, &verify)
            return verificationCode(verify).map { ($0, nil) }
        case CURLE_SSL_PINNEDPUBKEYNOTMATCH:
            return (.tlsPinMismatch, nil)
        case CURLE_SSL_CERTPROBLEM:
            return (.tlsClientCertificateInvalid, nil)
        case CURLE_PROXY:
            return (.proxyFailure, nil)
        default:
            return nil
        }
    }

    /// What to do about a refused certificate or an unusable client certificate, appended to
    /// libcurl's message (which says only what was wrong); `nil` for other codes.
    package static func remedy(for code: CurlewError.Code) -> String? {
        switch code {
        case .tlsCertificateUntrusted:
            "; the server's certificate does not chain to a trusted root: trust its issuer with TLSOptions.trustRoots (.file or .pem)"
        case .tlsCertificateExpired:
            "; the server's certificate is outside its validity period: renew it on the server, or check this machine's clock"
        case .tlsHostnameMismatch:
            "; the server's certificate is not valid for the URL's host name: use a name it was issued for (a HostOverride reaches another address under that name)"
        case .tlsPinMismatch:
            "; the server's public key is none of TLSOptions.pinnedPublicKeys: after a key rotation, list the new key's pin too"
        case .tlsClientCertificateInvalid:
            "; check TLSOptions.clientCertificate: PEM files that exist, a key that matches the certificate, and the key's password"
        default:
            nil
        }
    }

    /// The code for OpenSSL's verification result of a certificate libcurl refused. libcurl
    /// checks the host name itself: a refusal with the chain verified (`X509_V_OK`), or before
    /// OpenSSL's result was read (libcurl's placeholder 1), or OpenSSL's own host check, is a
    /// host name mismatch.
    package static func verificationCode(_ verify: Int) -> CurlewError.Code? {
        switch verify {
        case 0, 1, VerifyResult.hostnameMismatch:
            .tlsHostnameMismatch
        case VerifyResult.expired, VerifyResult.notYetValid:
            .tlsCertificateExpired
        case VerifyResult.selfSigned, VerifyResult.selfSignedInChain, VerifyResult.unableToGetIssuerLocally,
            VerifyResult.unableToGetIssuer, VerifyResult.unableToVerifyLeaf, VerifyResult.untrusted:
            .tlsCertificateUntrusted
        default:
            nil
        }
    }
}
