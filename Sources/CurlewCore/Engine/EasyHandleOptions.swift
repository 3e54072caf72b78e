package import CCurlShim

/// The options of an easy handle that depend only on the request's ``TransferOptions``, its
/// scheme and where the body goes — the same for almost every request of a client.
///
/// A pooled handle keeps its options (no `curl_easy_reset` between transfers); a transfer
/// compares the options it needs with the ones the handle carries and sets them only when they
/// differ (``PooledEasyHandle``). A handle whose options differ is reset first, so an option the
/// new request leaves at libcurl's default (no total timeout, no CA bundle, no compression) never
/// carries over from the last one.
package struct EasyHandleOptions: Sendable, Equatable {
    /// Timeouts, limits, redirects, protocol and compression choices.
    package var transfer: TransferOptions
    /// Whether `CURLOPT_MAXFILESIZE_LARGE` applies (collected bodies; files and streams are not
    /// held in memory).
    package var limitsBody: Bool
    /// Whether the URL is https (pipe-wait for a multiplexing connection).
    package var isHTTPS: Bool

    /// The options for one request.
    package init(_ request: PreparedRequest, limitsBody: Bool) {
        self.transfer = request.options
        self.limitsBody = limitsBody
        self.isHTTPS = request.url.hasUTF8Prefix("https:")
    }

    /// Sets the options that never change (on a new or reset handle), then this value's.
    /// Returns the first option libcurl refused, with its code.
    package func apply(to handle: UnsafeMutableRawPointer) -> (option: CURLoption, code: CURLcode)? {
        var failure: (option: CURLoption, code: CURLcode)?
        func long(_ option: CURLoption, _ value: Int) {
            guard failure == nil else { return }
            let code = curlew_easy_setopt_long(handle, option, value)
            if code != CURLE_OK { failure = (option, code) }
        }
        func string(_ option: CURLoption, _ value: String) {
            guard failure == nil else { return }
            let code = curlew_easy_setopt_string(handle, option, value)
            if code != CURLE_OK { failure = (option, code) }
        }
        func offset(_ option: CURLoption, _ value: curl_off_t) {
            guard failure == nil else { return }
            let code = curlew_easy_setopt_off_t(handle, option, value)
            if code != CURLE_OK { failure = (option, code) }
        }
        func callback(_ option: CURLoption, _ value: curlew_data_callback) {
            guard failure == nil else { return }
            let code = curlew_easy_setopt_data_callback(handle, option, value)
            if code != CURLE_OK { failure = (option, code) }
        }
        // Fixed for every transfer.
        long(CURLOPT_NOSIGNAL, 1)
        string(CURLOPT_PROTOCOLS_STR, "http,https")
        string(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        long(CURLOPT_SSL_VERIFYPEER, 1)
        long(CURLOPT_SSL_VERIFYHOST, 2)
        long(CURLOPT_UNRESTRICTED_AUTH, 0)
        // The path goes out as the request built it: libcurl removes `.`/`..` segments (and,
        // since 8.13, percent-encoded ones such as a `@Path` value of `..`) from a URL without a
        // query, while one with a query is sent verbatim as its request target.
        long(CURLOPT_PATH_AS_IS, 1)
        callback(CURLOPT_WRITEFUNCTION, CurlCallbacks.write)
        callback(CURLOPT_HEADERFUNCTION, CurlCallbacks.header)
        // From the request's transfer options.
        let options = transfer
        // TLS (peer verification, CA file or roots, client certificates), proxies and speed
        // limits: `CurlConnectionOptions`, applied per transfer after this block.
        // Redirects are followed by ``RedirectPolicy`` (one policy); libcurl's default is not to.
        long(CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(options.connectTimeout))
        if let total = options.totalTimeout { long(CURLOPT_TIMEOUT_MS, Self.milliseconds(total)) }
        // The maximum body size protects memory: streams and files are not held in memory.
        if limitsBody { offset(CURLOPT_MAXFILESIZE_LARGE, curl_off_t(options.maximumBodySize)) }
        switch options.httpVersion {
        case .automatic:
            long(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
            // Over TLS, wait for a connection that may multiplex instead of opening another.
            if isHTTPS { long(CURLOPT_PIPEWAIT, 1) }
        case .http1Only:
            long(CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_1_1))
        }
        if options.acceptsCompressedResponses {
            // Curlew decodes (``ResponseContentDecoder``): libcurl 7.88 takes a compressed
            // stream cut short for a complete body. So only the codings Curlew decodes are asked
            // for (`Accept-Encoding: gzip, deflate, br, zstd`, a line of the header list:
            // ``HeaderListExtras/acceptEncoding``), and libcurl hands the body over as received.
            long(CURLOPT_HTTP_CONTENT_DECODING, 0)
        }
        return failure
    }

    /// Fails with `.invalidConnectionSettings` when a timeout is zero or negative: libcurl would
    /// read it as a millisecond (a total timeout then fires after the request went out) or as
    /// "no timeout", neither what was asked for; likewise for a
    /// ``TransferOptions/maximumConnectAttempts`` below 1 and a negative
    /// ``TransferOptions/maximumBodySize`` or ``TransferOptions/redirectLimit``. Checked
    /// before anything is set or sent. Every transfer passes here, so the check builds nothing
    /// unless it fails.
    package static func checkRanges(_ options: TransferOptions, request: RequestSummary) throws(CurlewError) {
        func refuse(_ name: String, _ value: Duration?) throws(CurlewError) {
            guard let value, value <= .zero || value > longestDuration else { return }
            let rule = value <= .zero ? "longer than zero" : "at most 365 days (nil for no limit)"
            throw CurlewError(code: .invalidConnectionSettings, message: "\(name) must be \(rule), not \(value); nothing was sent", request: request)
        }
        try refuse("connectTimeout", options.connectTimeout)
        try refuse("headTimeout", options.headTimeout)
        try refuse("idleTimeout", options.idleTimeout)
        try refuse("totalTimeout", options.totalTimeout)
        func refuse(_ name: String, _ rule: String, _ value: Int) throws(CurlewError) {
            throw CurlewError(
                code: .invalidConnectionSettings, message: "\(name) must be \(rule), not \(value); nothing was sent", request: request)
        }
        if let attempts = options.maximumConnectAttempts, attempts < 1 {
            try refuse("maximumConnectAttempts", "at least 1 (1 turns connection retries off)", attempts)
        }
        if options.maximumBodySize < 0 { try refuse("maximumBodySize", "zero or more", options.maximumBodySize) }
        if options.redirectLimit < 0 { try refuse("redirectLimit", "zero or more (0 returns 3xx answers as they are)", options.redirectLimit) }
    }

    /// The longest timeout or delay the engine takes: 365 days. Longer is refused rather than
    /// converted, since a timeout of `.seconds(Int64.max)` has no millisecond or nanosecond
    /// count; a timeout that should never fire is `nil`.
    package static let longestDuration: Duration = .seconds(365 * 86_400)

    /// Whole milliseconds, at least 1 (libcurl reads 0 as "no timeout"); saturating for a
    /// duration ``checkRanges(_:request:)`` refuses.
    package static func milliseconds(_ duration: Duration) -> Int {
        max(1, Int(duration.saturatingMilliseconds))
    }
}
