internal import CCurlShim

/// Maps libcurl result codes to ``CurlewError`` codes, in one switch.
enum CurlResultMapping {
    static func error(for code: CURLcode, detail: String, request: RequestSummary) -> CurlewError {
        let text = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        return CurlewError(code: errorCode(for: code, detail: detail), message: text, request: request)
    }

    static func errorCode(for code: CURLcode, detail: String) -> CurlewError.Code {
        switch code {
        case CURLE_COULDNT_CONNECT: .cannotConnect
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: .dnsFailure
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
            CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR,
            CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_CRL_BADFILE, CURLE_SSL_INVALIDCERTSTATUS:
            .tlsFailure
        case CURLE_OPERATION_TIMEDOUT: timeoutCode(detail: detail)
        case CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_PARTIAL_FILE, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            .connectionReset
        case CURLE_GOT_NOTHING: .emptyReply
        case CURLE_TOO_MANY_REDIRECTS: .tooManyRedirects
        case CURLE_UNSUPPORTED_PROTOCOL: .redirectRefused
        case CURLE_FILESIZE_EXCEEDED: .bodyTooLarge
        default: .transportFailure
        }
    }

    /// libcurl reports every timeout as `CURLE_OPERATION_TIMEDOUT`; its message says which phase:
    /// "Resolving timed out" / "Connection timed out" (connect), "Operation too slow" (a
    /// download's stall detector, `CURLOPT_LOW_SPEED_*`: `.idleTimeout`), otherwise the total
    /// timeout. (Idle timeouts without a byte moved are Curlew's own, detected by the engine.)
    static func timeoutCode(detail: String) -> CurlewError.Code {
        if detail.hasPrefix("Connection timed out") || detail.hasPrefix("Resolving timed out") {
            return .connectTimeout
        }
        if detail.hasPrefix("Operation too slow") { return .idleTimeout }
        return .totalTimeout
    }
}
