internal import CCurlShim
internal import Foundation
internal import HTTPTypes

/// One exchange: the easy handle, its header list, its body sink and the continuation to resume.
///
/// Created and configured on the caller's thread, then handed to the engine thread through the
/// inbox mutex; from then on only the engine thread touches it (the handle is never used by two
/// threads at once, which is all libcurl asks). That hand-off is why it is `@unchecked Sendable`.
final class CurlEasyTransfer: @unchecked Sendable {
    typealias Continuation = CheckedContinuation<CompletedTransfer, any Error>

    let id: UInt64
    let request: PreparedRequest
    let handle: UnsafeMutableRawPointer
    private let pool: EasyHandlePool
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private let errorBuffer: UnsafeMutablePointer<CChar>
    private var continuation: Continuation?
    private var head = ResponseHeadParser()
    private let sink: BufferedBodySink
    private var sinkExpected = false
    /// Set when a callback aborted the transfer, so the error reports our reason, not curl's.
    private var abortReason: (CurlewError.Code, String)?
    /// Present when the request has an idle timeout; sampled by the engine.
    private var idleTracker: IdleTracker?

    /// Takes an easy handle from the pool and applies every option; throws if libcurl refuses one.
    init(id: UInt64, request: PreparedRequest, pool: EasyHandlePool, continuation: Continuation) throws(CurlewError) {
        guard let handle = pool.take() else {
            throw CurlewError(code: .transportFailure, message: "curl_easy_init failed", request: request.summary)
        }
        self.id = id
        self.request = request
        self.handle = handle
        self.pool = pool
        self.continuation = continuation
        self.sink = BufferedBodySink(maximumSize: request.options.maximumBodySize)
        self.errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        self.errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        if let idle = request.options.idleTimeout {
            self.idleTracker = IdleTracker(timeoutNanoseconds: Self.nanoseconds(idle), now: EngineClock.now())
        }
        try configure()
    }

    deinit {
        pool.recycle(handle)
        if let headerList { curl_slist_free_all(headerList) }
        errorBuffer.deallocate()
    }

    // MARK: Options

    private func configure() throws(CurlewError) {
        let options = request.options
        let this = Unmanaged.passUnretained(self).toOpaque()
        try set(CURLOPT_NOSIGNAL, 1)
        try set(CURLOPT_PROTOCOLS_STR, "http,https")
        try set(CURLOPT_REDIR_PROTOCOLS_STR, "http,https")
        try set(CURLOPT_URL, request.url)
        try set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
        try set(CURLOPT_PRIVATE, pointer: UnsafeMutableRawPointer(bitPattern: UInt(id)))
        try set(CURLOPT_SSL_VERIFYPEER, 1)
        try set(CURLOPT_SSL_VERIFYHOST, 2)
        if let caBundlePath = options.caBundlePath { try set(CURLOPT_CAINFO, caBundlePath) }
        try set(CURLOPT_FOLLOWLOCATION, options.redirectLimit > 0 && options.originBoundHeaders.isEmpty ? 1 : 0)
        try set(CURLOPT_MAXREDIRS, options.redirectLimit)
        try set(CURLOPT_UNRESTRICTED_AUTH, 0)
        try set(CURLOPT_CONNECTTIMEOUT_MS, Self.milliseconds(options.connectTimeout))
        if let total = options.totalTimeout { try set(CURLOPT_TIMEOUT_MS, Self.milliseconds(total)) }
        try set(CURLOPT_MAXFILESIZE_LARGE, offset: curl_off_t(options.maximumBodySize))
        switch options.httpVersion {
        case .automatic:
            try set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_2TLS)
            // Over TLS, wait for a connection that may multiplex instead of opening another.
            if request.url.utf8.starts(with: "https:".utf8) { try set(CURLOPT_PIPEWAIT, 1) }
        case .http1Only:
            try set(CURLOPT_HTTP_VERSION, CURL_HTTP_VERSION_1_1)
        }
        if options.acceptsCompressedResponses { try set(CURLOPT_ACCEPT_ENCODING, "") }
        try configureMethodAndBody()
        try configureHeaders()
        try check(curlew_easy_setopt_data_callback(handle, CURLOPT_WRITEFUNCTION, curlewWriteCallback), CURLOPT_WRITEFUNCTION)
        try set(CURLOPT_WRITEDATA, pointer: this)
        try check(curlew_easy_setopt_data_callback(handle, CURLOPT_HEADERFUNCTION, curlewHeaderCallback), CURLOPT_HEADERFUNCTION)
        try set(CURLOPT_HEADERDATA, pointer: this)
    }

    private func configureMethodAndBody() throws(CurlewError) {
        let method = request.method
        if let body = request.body {
            try set(CURLOPT_POSTFIELDSIZE_LARGE, offset: curl_off_t(body.count))
            let code = body.withUnsafeBytes { raw in
                curlew_easy_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress ?? UnsafeRawPointer(errorBuffer)))
            }
            try check(code, CURLOPT_COPYPOSTFIELDS)
            if method != .post { try set(CURLOPT_CUSTOMREQUEST, method.rawValue) }
            return
        }
        switch method {
        case .get: try set(CURLOPT_HTTPGET, 1)
        case .head: try set(CURLOPT_NOBODY, 1)
        case .post:
            try set(CURLOPT_POSTFIELDSIZE_LARGE, offset: 0)
            try set(CURLOPT_COPYPOSTFIELDS, "")
        default: try set(CURLOPT_CUSTOMREQUEST, method.rawValue)
        }
    }

    private func configureHeaders() throws(CurlewError) {
        var list: UnsafeMutablePointer<curl_slist>? = nil
        func append(_ line: String) {
            if let next = curl_slist_append(list, line) { list = next }
        }
        var hasContentType = false
        for field in request.headers {
            if field.name == .contentType { hasContentType = true }
            append("\(field.name.rawName): \(field.value)")
        }
        // No `Expect: 100-continue` round trip; no form content type libcurl would invent.
        append("Expect:")
        if !hasContentType { append("Content-Type:") }
        headerList = list
        try set(CURLOPT_HTTPHEADER, list: list)
    }

    // MARK: Callbacks (engine thread)

    fileprivate func receiveHeader(_ bytes: UnsafeRawBufferPointer) -> Int {
        head.consume(line: bytes)
        return bytes.count
    }

    fileprivate func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        if !sinkExpected {
            sinkExpected = true
            var length: curl_off_t = -1
            _ = curlew_easy_getinfo_off_t(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
            sink.expect(contentLength: length > 0 ? Int(length) : nil)
        }
        switch sink.receive(bytes) {
        case .proceed:
            return bytes.count
        case .pause:
            return Int(CURL_WRITEFUNC_PAUSE)
        case .abort(let code, let message):
            abortReason = (code, message)
            return 0
        }
    }

    // MARK: Idle detection (engine thread)

    /// Samples the byte counters; returns the idle-timeout error once no byte moved for longer
    /// than the request's idle timeout.
    func idleFailure(now: UInt64) -> CurlewError? {
        guard var tracker = idleTracker else { return nil }
        var received: curl_off_t = 0
        var sent: curl_off_t = 0
        _ = curlew_easy_getinfo_off_t(handle, CURLINFO_SIZE_DOWNLOAD_T, &received)
        _ = curlew_easy_getinfo_off_t(handle, CURLINFO_SIZE_UPLOAD_T, &sent)
        let expired = tracker.observe(bytesMoved: Int64(received) &+ Int64(sent) &+ Int64(head.bytesSeen), now: now)
        idleTracker = tracker
        guard expired else { return nil }
        let limit = Self.milliseconds(request.options.idleTimeout ?? .zero)
        return CurlewError(code: .idleTimeout, message: "no data moved for \(limit) ms", request: request.summary)
    }

    // MARK: Completion

    /// Hands the continuation out exactly once; later calls get `nil`.
    func takeContinuation() -> Continuation? {
        defer { continuation = nil }
        return continuation
    }

    /// Builds the outcome of a finished transfer from libcurl's result code.
    func outcome(for code: CURLcode) -> Result<CompletedTransfer, CurlewError> {
        if let (reasonCode, message) = abortReason {
            return .failure(CurlewError(code: reasonCode, message: message, request: request.summary))
        }
        if code == CURLE_FILESIZE_EXCEEDED {
            let limit = request.options.maximumBodySize
            return .failure(CurlewError(code: .bodyTooLarge, message: "response body exceeds the maximum of \(limit) bytes", request: request.summary))
        }
        guard code == CURLE_OK else {
            let detail = String(cString: errorBuffer)
            return .failure(CurlResultMapping.error(for: code, detail: detail, request: request.summary))
        }
        var status = 0
        _ = curlew_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        var url = request.url
        var redirects = 0
        _ = curlew_easy_getinfo_long(handle, CURLINFO_REDIRECT_COUNT, &redirects)
        if redirects > 0 {
            var effective: UnsafePointer<CChar>? = nil
            _ = curlew_easy_getinfo_string(handle, CURLINFO_EFFECTIVE_URL, &effective)
            if let effective { url = String(cString: effective) }
        }
        return .success(CompletedTransfer(status: status, headerBlock: head.block, body: sink.body, url: url))
    }

    // MARK: Option helpers

    private func set(_ option: CURLoption, _ value: Int) throws(CurlewError) {
        try check(curlew_easy_setopt_long(handle, option, value), option)
    }

    private func set(_ option: CURLoption, offset value: curl_off_t) throws(CurlewError) {
        try check(curlew_easy_setopt_off_t(handle, option, value), option)
    }

    private func set(_ option: CURLoption, _ value: String) throws(CurlewError) {
        try check(curlew_easy_setopt_string(handle, option, value), option)
    }

    private func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) throws(CurlewError) {
        try check(curlew_easy_setopt_pointer(handle, option, value), option)
    }

    private func set(_ option: CURLoption, list value: UnsafeMutablePointer<curl_slist>?) throws(CurlewError) {
        try check(curlew_easy_setopt_slist(handle, option, value), option)
    }

    private func check(_ code: CURLcode, _ option: CURLoption) throws(CurlewError) {
        guard code == CURLE_OK else {
            throw CurlewError(
                code: .transportFailure,
                message: "libcurl rejected option \(option.rawValue): \(String(cString: curl_easy_strerror(code)))",
                request: request.summary
            )
        }
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        let (seconds, attoseconds) = duration.components
        return UInt64(max(0, seconds)) * 1_000_000_000 + UInt64(max(0, attoseconds) / 1_000_000_000)
    }

    private static func milliseconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return max(1, Int(seconds) * 1000 + Int(attoseconds / 1_000_000_000_000_000))
    }
}

/// `CURLOPT_WRITEFUNCTION`: forwards body bytes to the transfer named by the user pointer.
private let curlewWriteCallback: curlew_data_callback = { bytes, size, count, user in
    guard let user else { return 0 }
    let transfer = Unmanaged<CurlEasyTransfer>.fromOpaque(user).takeUnretainedValue()
    return transfer.receiveBody(UnsafeRawBufferPointer(start: bytes, count: size * count))
}

/// `CURLOPT_HEADERFUNCTION`: forwards one header line to the transfer named by the user pointer.
private let curlewHeaderCallback: curlew_data_callback = { bytes, size, count, user in
    guard let user else { return 0 }
    let transfer = Unmanaged<CurlEasyTransfer>.fromOpaque(user).takeUnretainedValue()
    return transfer.receiveHeader(UnsafeRawBufferPointer(start: bytes, count: size * count))
}
