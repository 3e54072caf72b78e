package import CCurlShim

/// Maps libcurl result codes to ``CurlewError`` codes by what happened: the result code together
/// with libcurl's own state for the transfer (``Facts``), not one guess per code.
package enum CurlResultMapping {
    /// What libcurl knew about the transfer when it failed (read with `curl_easy_getinfo`).
    package struct Facts: Equatable {
        /// A connection was established (or reused): `CURLINFO_PRETRANSFER_TIME_T` or
        /// `CURLINFO_CONNECT_TIME_T` is set, or response bytes arrived.
        package var connected: Bool
        /// `CURLINFO_RESPONSE_CODE`; 0 when no status line was parsed.
        package var responseCode: Int
        /// The total timeout is shorter than the connect timeout, so a timeout while connecting
        /// is the total one.
        package var totalTimeoutBeforeConnectTimeout: Bool

        /// Facts of a transfer that never connected.
        package static let unconnected = Facts(connected: false, responseCode: 0, totalTimeoutBeforeConnectTimeout: false)
    }

    package static func error(for code: CURLcode, detail: String, facts: Facts, request: RequestSummary) -> CurlewError {
        let text = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
        return CurlewError(code: errorCode(for: code, detail: detail, facts: facts), message: text, request: request)
    }

    package static func errorCode(for code: CURLcode, detail: String, facts: Facts) -> CurlewError.Code {
        switch code {
        case CURLE_COULDNT_CONNECT: .cannotConnect
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY: .dnsFailure
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM,
            CURLE_SSL_CIPHER, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_ISSUER_ERROR,
            CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_CRL_BADFILE, CURLE_SSL_INVALIDCERTSTATUS:
            .tlsFailure
        case CURLE_OPERATION_TIMEDOUT: timeoutCode(detail: detail, facts: facts)
        case CURLE_RECV_ERROR:
            // libcurl 7.88 reports a malformed chunk (a coding after `chunked`, a bad size line)
            // as a receive error too; its message is the only thing that tells them apart.
            detail.contains("chunked-encoding") || detail.contains("chunk") ? .protocolError : .connectionReset
        case CURLE_SEND_ERROR, CURLE_PARTIAL_FILE, CURLE_HTTP2, CURLE_HTTP2_STREAM:
            .connectionReset
        case CURLE_GOT_NOTHING: .emptyReply
        case CURLE_SEND_FAIL_REWIND:
            // libcurl wanted to resend the body on a new connection after the reused one died.
            .connectionClosedBeforeResponse
        case CURLE_TOO_MANY_REDIRECTS: .tooManyRedirects
        case CURLE_UNSUPPORTED_PROTOCOL:
            // Either a redirect to a refused scheme (a 3xx was parsed) or a response libcurl
            // could not parse as HTTP (HTTP/0.9, an unknown version, an invalid status code).
            (300..<400).contains(facts.responseCode) ? .redirectRefused : (facts.connected ? .protocolError : .transportFailure)
        case CURLE_WEIRD_SERVER_REPLY, CURLE_BAD_CONTENT_ENCODING:
            .protocolError
        case CURLE_FILESIZE_EXCEEDED: .bodyTooLarge
        // A URL that reached the transport unchecked (`PreparedRequest(url:)` given to it
        // directly) and that libcurl refuses: a space or control character, a bad port.
        case CURLE_URL_MALFORMAT: .malformedURL
        default: .transportFailure
        }
    }

    /// libcurl reports every timeout as `CURLE_OPERATION_TIMEDOUT`. A transfer that never got a
    /// connection timed out while connecting — unless the total timeout is the shorter one and
    /// fired first. A connected transfer stopped by a download's stall detector
    /// (`CURLOPT_LOW_SPEED_*`, libcurl's "Operation too slow") is `.idleTimeout`; otherwise it is
    /// the total timeout. (Idle timeouts without a byte moved are Curlew's own, detected by the
    /// engine.)
    package static func timeoutCode(detail: String, facts: Facts) -> CurlewError.Code {
        if !facts.connected && !facts.totalTimeoutBeforeConnectTimeout { return .connectTimeout }
        if detail.hasPrefix("Operation too slow") { return .idleTimeout }
        return .totalTimeout
    }
}
