internal import CCurlShim
internal import Foundation
internal import HTTPTypes

/// One exchange: the easy handle, its header list, its body sink and source, its state machine
/// and the continuation to resume.
///
/// Created and configured on the caller's thread, then handed to the engine thread through the
/// inbox mutex; from then on only the engine thread touches it (the handle is never used by two
/// threads at once, which is all libcurl asks). That hand-off is why it is `@unchecked Sendable`:
/// every stored property is written on the caller's thread before the hand-off and on the engine
/// thread after it (or, for a transfer rejected before submission, only on the caller's thread).
/// The sink's buffer and the request-body pump are `Sendable` types with their own mutexes.
///
/// The mutable properties are `@exclusivity(unchecked)`: one thread at a time touches them (the
/// confinement above), and none is reached again while it is being modified (the libcurl
/// callbacks run inside `curl_multi_perform`, never inside a method that modifies a property), so
/// the runtime's dynamic exclusivity check (about 120 instructions an access, 14 per response
/// head on the header callback alone) guards nothing here.
final class CurlEasyTransfer: @unchecked Sendable {
    /// The caller's continuation: an unsafe one, resumed exactly once because only
    /// ``takeContinuation()`` hands it out and it clears it, on the one thread that owns the
    /// transfer at a time. A checked continuation allocated a canary object per request, and as a
    /// type of the resilient standard library every copy or destroy of it (an `Optional` here)
    /// went through its value witnesses.
    typealias Continuation = UnsafeContinuation<CompletedTransfer, any Error>

    /// What a transfer needs from its engine while it is configured.
    struct Environment {
        /// The engine: its counters, and its hooks for transfers that stream (built only then).
        let engine: CurlEngine
        /// Curlew follows redirects itself (``RedirectFollower``): a 3xx head is one hop, not
        /// the final head, so it is not reported as `headReceived`.
        let followsRedirectsInSwift: Bool
    }

    let id: UInt64
    let request: PreparedRequest
    let handle: UnsafeMutableRawPointer
    private let pool: EasyHandlePool
    /// The handle with the options and header list it carries; goes back to the pool on deinit.
    @exclusivity(unchecked) private var pooled: PooledEasyHandle
    /// Whether this transfer set only options the next one overwrites or shares (see
    /// ``configureMethodAndBody(_:)``), so the handle can go back without `curl_easy_reset`.
    @exclusivity(unchecked) private var keepsOptions = false
    /// Whether `CURLOPT_URL` is only the URL's part up to the query (``configureURL(https:)``), so
    /// libcurl's effective URL lacks the query.
    @exclusivity(unchecked) private var sendsRequestTarget = false
    private let errorBuffer: UnsafeMutablePointer<CChar>
    @exclusivity(unchecked) private var continuation: Continuation?
    @exclusivity(unchecked) private var head = ResponseHeadParser()
    /// Framing checks of each response head (``ResponseFraming``).
    @exclusivity(unchecked) private var framing = ResponseFraming()
    /// Present while a compressed body is decoded (``ResponseContentDecoder``).
    @exclusivity(unchecked) private var decoder: ResponseContentDecoder?
    /// Whether `CURLOPT_FORBID_REUSE` is on: while a compressed stream is unfinished, so a body
    /// that ends there leaves its connection closed (the handle is reset before it is reused).
    @exclusivity(unchecked) private var reuseForbidden = false
    /// Present for requests libcurl must not resend by itself (``ReplayGuard``).
    @exclusivity(unchecked) private var replayGuard: ReplayGuard?
    private let sink: any ResponseBodySink
    private let source: RequestBodySource?
    @exclusivity(unchecked) private var machine: TransferStateMachine
    private let statistics: EngineStatistics
    private let followsRedirectsInSwift: Bool
    /// Present only when someone listens to the call's events.
    private let events: EventReporter?
    /// The counters last reported as progress (events only).
    @exclusivity(unchecked) private var lastProgress = TransferProgress()
    /// When progress was last reported (``EngineClock``), for the ~60-a-second throttle.
    @exclusivity(unchecked) private var lastProgressAt: UInt64 = 0
    /// A download's stall detector: `CURLOPT_LOW_SPEED_LIMIT` (bytes a second) and
    /// `CURLOPT_LOW_SPEED_TIME` (seconds).
    private let lowSpeed: (bytesPerSecond: Int, seconds: Int)?
    /// Set when a callback aborted the transfer, so the error reports our reason, not curl's.
    @exclusivity(unchecked) private var abortReason: CurlewError?
    /// Present when the request has an idle timeout; sampled by the engine.
    @exclusivity(unchecked) private var idleTracker: IdleTracker?
    /// The cookie jar and host overrides the handle points at (Curl/CurlConnectionOptions.swift).
    @exclusivity(unchecked) private var connection: CurlConnectionAttachment?

    /// Takes an easy handle from the pool and applies every option; throws if libcurl refuses
    /// one, if the download file cannot be created or the upload file cannot be opened.
    init(
        id: UInt64, request: PreparedRequest, context: TransportContext, environment: Environment,
        pool: EasyHandlePool, continuation: Continuation
    ) throws(CurlewError) {
        let disposition = context.responseBody.storage
        var hooks: TransferHooks?
        func transferHooks() -> TransferHooks {
            if let hooks { return hooks }
            let made = environment.engine.hooks(for: id)
            hooks = made
            return made
        }
        switch disposition {
        case .collect:
            self.sink = BufferedBodySink(maximumSize: request.options.maximumBodySize)
        case .stream(let highWaterMark):
            // A cancelled reader gets `CancellationError`, as everywhere else in Curlew.
            self.sink = StreamBodySink(highWaterMark: highWaterMark, hooks: transferHooks())
        case .file(let path):
            self.sink = try FileBodySink.create(path: path, request: request.summary)
        case .download(let target):
            self.sink = try DownloadBodySink.open(target, request: request.summary)
        }
        if case .download(let target) = disposition, let seconds = target.stallSeconds {
            self.lowSpeed = (target.minimumSpeed, seconds)
        } else {
            self.lowSpeed = nil
        }
        switch request.content {
        case .file(let path, _)?:
            self.source = .file(try FileRequestBody(path: path, request: request.summary))
        case .stream(let stream)?:
            let pump = RequestBodyPump(length: stream.length, request: request.summary, hooks: transferHooks())
            self.source = .stream(pump)
        case .data?, nil:
            self.source = nil
        }
        guard let pooled = pool.take() else {
            sink.fail(CurlewError(code: .transportFailure, message: "curl_easy_init failed", request: request.summary))
            source?.close()
            throw CurlewError(code: .transportFailure, message: "curl_easy_init failed", request: request.summary)
        }
        self.id = id
        self.request = request
        self.handle = pooled.handle
        self.pooled = pooled
        self.pool = pool
        self.continuation = continuation
        self.machine = TransferStateMachine(resumesAtHead: { if case .stream = disposition { true } else { false } }())
        self.statistics = environment.engine.statistics
        self.followsRedirectsInSwift = environment.followsRedirectsInSwift
        self.events = context.events.isActive ? context.events : nil
        self.errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        self.errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        if let idle = request.options.idleTimeout {
            self.idleTracker = IdleTracker(timeoutNanoseconds: Self.nanoseconds(idle), now: EngineClock.now())
        }
        // A HEAD response has no body, whatever its Content-Length says.
        try configure(limitsBody: disposition == .collect && request.method != .head)
        if case .stream(let stream)? = request.content, case .stream(let pump)? = source { pump.start(stream) }
    }

    deinit {
        // A transfer dropped without an outcome (never submitted) still removes a partial file
        // (the file sink's own deinit) and stops a request-body producer.
        source?.close()
        connection?.detach(from: handle)
        pool.recycle(pooled, keepsOptions: keepsOptions && !reuseForbidden)
        errorBuffer.deallocate()
    }

    // MARK: Options

    /// Applies the options: the block that depends only on the transfer options when the pooled
    /// handle does not carry it already (``EasyHandleOptions``), then what is this transfer's own
    /// (URL, buffers, method and body, headers, callbacks' user data).
    private func configure(limitsBody: Bool) throws(CurlewError) {
        let this = Unmanaged.passUnretained(self).toOpaque()
        let options = EasyHandleOptions(request, limitsBody: limitsBody)
        let outcome = pooled.ensure(options)
        if case .refused(let option, let code) = outcome { try check(code, option) }
        try configureURL(https: options.isHTTPS)
        try set(CURLOPT_ERRORBUFFER, pointer: UnsafeMutableRawPointer(errorBuffer))
        try set(CURLOPT_PRIVATE, pointer: UnsafeMutableRawPointer(bitPattern: UInt(id)))
        // TLS, proxy, speed limits, cookies and host overrides depend only on the transfer
        // options (a change resets the handle in `ensure`): a handle that carries the same
        // options carries these too. A cookie jar or host overrides are attached to this
        // transfer, so that handle is reset before reuse and never carries them.
        if case .applied = outcome {
            connection = try CurlConnectionOptions.apply(request.options, to: handle, request: request.summary)
        }
        if let lowSpeed {
            // libcurl ends it with CURLE_OPERATION_TIMEDOUT, "Operation too slow…" (`.idleTimeout`).
            try set(CURLOPT_LOW_SPEED_LIMIT, lowSpeed.bytesPerSecond)
            try set(CURLOPT_LOW_SPEED_TIME, lowSpeed.seconds)
        }
        try configureMethodAndBody(this)
        try configureHeaders()
        // A cookie jar, host overrides or a stall limit are this transfer's: reset after it.
        if connection != nil || lowSpeed != nil { keepsOptions = false }
        if ReplayGuard.isNeeded(method: request.method, content: request.content) {
            replayGuard = ReplayGuard()
            try check(curlew_easy_setopt_prereq_callback(handle, curlewPrereqCallback), CURLOPT_PREREQFUNCTION)
            try set(CURLOPT_PREREQDATA, pointer: this)
            // The callback points at this transfer: the handle is reset before it is reused.
            keepsOptions = false
        }
        try set(CURLOPT_WRITEDATA, pointer: this)
        try set(CURLOPT_HEADERDATA, pointer: this)
        if events != nil {
            // Progress costs a callback per libcurl loop; only when someone listens.
            try check(curlew_easy_setopt_xferinfo_callback(handle, curlewProgressCallback), CURLOPT_XFERINFOFUNCTION)
            try set(CURLOPT_XFERINFODATA, pointer: this)
            try set(CURLOPT_NOPROGRESS, 0)
            keepsOptions = false
        }
    }

    /// `CURLOPT_URL`, and `CURLOPT_REQUEST_TARGET` for a URL with a query that libcurl sends in
    /// origin form (``RequestTarget``); a handle that carries a target from an earlier transfer
    /// has it cleared when this one sends none.
    private func configureURL(https: Bool) throws(CurlewError) {
        if request.options.connection.proxy.sendsOriginForm(https: https), try setSplitURL() {
            pooled.carriesRequestTarget = true
            sendsRequestTarget = true
            return
        }
        try set(CURLOPT_URL, request.url)
        if pooled.carriesRequestTarget {
            try check(curlew_easy_setopt_string(handle, CURLOPT_REQUEST_TARGET, nil), CURLOPT_REQUEST_TARGET)
            pooled.carriesRequestTarget = false
        }
    }

    /// Sets `CURLOPT_URL` to the URL up to its query and `CURLOPT_REQUEST_TARGET` to path and
    /// query (``RequestTarget``), both written as C strings into one stack buffer (libcurl copies
    /// them); `false`, setting nothing, when the URL has no query.
    private func setSplitURL() throws(CurlewError) -> Bool {
        var url = request.url
        let handle = self.handle
        let codes = url.withUTF8 { bytes -> (CURLcode, CURLcode)? in
            guard let ranges = RequestTarget.split(bytes) else { return nil }
            return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: ranges.cStringLength) { buffer in
                let targetStart = ranges.writeCStrings(of: bytes, into: buffer)
                return buffer.withMemoryRebound(to: CChar.self) { text in
                    guard let base = text.baseAddress else { return (CURLE_OUT_OF_MEMORY, CURLE_OUT_OF_MEMORY) }
                    return (curlew_easy_setopt_string(handle, CURLOPT_URL, base), curlew_easy_setopt_string(handle, CURLOPT_REQUEST_TARGET, base + targetStart))
                }
            }
        }
        guard let codes else { return false }
        try check(codes.0, CURLOPT_URL)
        try check(codes.1, CURLOPT_REQUEST_TARGET)
        return true
    }

    /// Method and body: in-memory bytes are copied to libcurl; files and streams are read while
    /// sending.
    private func configureMethodAndBody(_ this: UnsafeMutableRawPointer) throws(CurlewError) {
        let method = request.method
        if let source {
            // A body read while sending. libcurl documents two ways: CURLOPT_POST with a read
            // callback and CURLOPT_POSTFIELDSIZE_LARGE for POST, CURLOPT_UPLOAD (PUT) with
            // CURLOPT_INFILESIZE_LARGE otherwise, its method renamed by CURLOPT_CUSTOMREQUEST.
            // A size of -1 (unknown) makes libcurl use chunked encoding over HTTP/1.1.
            let size = curl_off_t(source.length ?? -1)
            if method == .post {
                try set(CURLOPT_POST, 1)
                try set(CURLOPT_POSTFIELDSIZE_LARGE, offset: size)
            } else {
                try set(CURLOPT_UPLOAD, 1)
                try set(CURLOPT_INFILESIZE_LARGE, offset: size)
                if method != .put { try set(CURLOPT_CUSTOMREQUEST, method.rawValue) }
            }
            try check(curlew_easy_setopt_data_callback(handle, CURLOPT_READFUNCTION, curlewReadCallback), CURLOPT_READFUNCTION)
            try set(CURLOPT_READDATA, pointer: this)
            if case .file = source {
                // Lets libcurl rewind the file to send it again (307/308 redirects).
                try check(curlew_easy_setopt_seek_callback(handle, curlewSeekCallback), CURLOPT_SEEKFUNCTION)
                try set(CURLOPT_SEEKDATA, pointer: this)
            }
            return
        }
        if let body = request.body {
            try set(CURLOPT_POSTFIELDSIZE_LARGE, offset: curl_off_t(body.count))
            let code = body.withUnsafeBytes { raw in
                curlew_easy_setopt_pointer(handle, CURLOPT_COPYPOSTFIELDS, UnsafeMutableRawPointer(mutating: raw.baseAddress ?? UnsafeRawPointer(errorBuffer)))
            }
            try check(code, CURLOPT_COPYPOSTFIELDS)
            if method != .post { try set(CURLOPT_CUSTOMREQUEST, method.rawValue) }
            // A POST of bytes leaves nothing the next transfer's method options do not replace;
            // a custom method string would stay, so that handle is reset.
            keepsOptions = method == .post
            return
        }
        switch method {
        case .get:
            // Also clears a previous transfer's POST (`CURLOPT_HTTPGET` resets the method).
            try set(CURLOPT_HTTPGET, 1)
            keepsOptions = true
        case .head: try set(CURLOPT_NOBODY, 1)
        case .post:
            try set(CURLOPT_POSTFIELDSIZE_LARGE, offset: 0)
            try set(CURLOPT_COPYPOSTFIELDS, "")
            keepsOptions = true
        default:
            // A handle kept after a POST of bytes still holds that POST (method and fields):
            // back to a bodiless request first, then the method's name.
            try set(CURLOPT_HTTPGET, 1)
            try set(CURLOPT_CUSTOMREQUEST, method.rawValue)
        }
    }

    /// The request's headers, without `Expect: 100-continue` and without a content type libcurl
    /// would invent.
    /// The list is built only when the pooled handle does not carry one for the same header set.
    private func configureHeaders() throws(CurlewError) {
        let headers = request.headers
        // libcurl adds `Expect: 100-continue` and a form `Content-Type` only to a POST or an
        // upload; a GET, a HEAD or a bodiless custom method gets neither, and two removal lines
        // more would only lengthen the list libcurl searches for every header it considers.
        var extras: HeaderListExtras = []
        if request.body != nil || source != nil || request.method == .post { extras.insert(.bodyRemovals) }
        if request.options.acceptsCompressedResponses { extras.insert(.acceptEncoding) }
        let code = pooled.ensureHeaders(headers, extras: extras) {
            var lines: [String] = []
            lines.reserveCapacity(headers.count + 3)
            // Empty values as `Name;`, cookie fields joined into one line (``HeaderLines``).
            let hasContentType = HeaderLines.forEach(in: headers) { lines.append($0) }
            // The header set is part of what the list is kept for, so its own `Accept-Encoding`
            // is looked for only when a list is built.
            if extras.contains(.acceptEncoding), headers[.acceptEncoding] == nil { lines.append("Accept-Encoding: gzip, deflate") }
            guard extras.contains(.bodyRemovals) else { return lines }
            // No `Expect: 100-continue` round trip; no form content type libcurl would invent.
            lines.append("Expect:")
            if !hasContentType { lines.append("Content-Type:") }
            return lines
        }
        try check(code, CURLOPT_HTTPHEADER)
    }

    // MARK: Callbacks (engine thread)

    /// `CURLOPT_HEADERFUNCTION`: one header line of any response (redirects and 1xx included).
    fileprivate func receiveHeader(_ bytes: UnsafeRawBufferPointer) -> Int {
        head.consume(line: bytes)
        if let violation = framing.consume(line: bytes) {
            // Aborting here makes libcurl close the connection rather than cache it.
            abortReason = CurlewError(code: .protocolError, message: violation, request: request.summary)
            return 0
        }
        return bytes.count
    }

    /// `CURLOPT_PREREQFUNCTION` (guarded requests only): libcurl is about to send an attempt.
    fileprivate func aboutToSend() -> Int32 {
        var redirects = 0
        _ = curlew_easy_getinfo_long(handle, CURLINFO_REDIRECT_COUNT, &redirects)
        guard var guardState = replayGuard else { return Int32(CURL_PREREQFUNC_OK) }
        let allowed = guardState.allowsAttempt(redirects: redirects)
        replayGuard = guardState
        guard allowed else {
            abortReason = CurlewError(
                code: .connectionClosedBeforeResponse,
                message: "the connection closed before a response; \(request.method.rawValue) is not sent again automatically",
                request: request.summary)
            return Int32(CURL_PREREQFUNC_ABORT)
        }
        return Int32(CURL_PREREQFUNC_OK)
    }

    /// `CURLOPT_WRITEFUNCTION`: body bytes of the final response. The first call completes the
    /// head (a streamed caller is resumed here); the sink decides to take, pause or abort.
    fileprivate func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        if case .headComplete(let resumeCaller) = machine.bodyArrived() {
            var length: curl_off_t = -1
            _ = curlew_easy_getinfo_off_t(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
            sink.expect(contentLength: length > 0 ? Int(length) : nil)
            if sink.wantsHead { sink.headArrived(status: responseCode(), headerBlock: head.block) }
            if resumeCaller || events != nil {
                let status = responseCode()
                reportHead(status: status)
                if resumeCaller {
                    takeContinuation()?.resume(returning: CompletedTransfer(
                        status: status, headerBlock: head.block, content: sink.content(), url: effectiveURL(), metrics: nil))
                }
            }
            // After the head went out: a streamed caller then gets the refusal from its stream.
            if !framing.contentCodings.isEmpty, request.options.acceptsCompressedResponses {
                switch ResponseContentDecoder.choose(for: framing.contentCodings) {
                case .none: break
                case .decode(let made): decoder = made
                case .refuse(let reason):
                    abortReason = CurlewError(code: .protocolError, message: reason, request: request.summary)
                    return 0
                }
            }
        }
        let decision: SinkDecision
        if let decoder {
            decision = decoder.decode(bytes, into: sink)
            if decoder.ended == reuseForbidden { forbidReuse(!decoder.ended) }
        } else {
            decision = sink.receive(bytes)
        }
        switch decision {
        case .proceed:
            return bytes.count
        case .pause:
            if machine.receivePaused() { statistics.receivePaused() }
            return Int(CURL_WRITEFUNC_PAUSE)
        case .abort(let code, let message):
            abortReason = CurlewError(code: code, message: message, request: request.summary)
            return 0
        }
    }

    /// Sets `CURLOPT_FORBID_REUSE`, which libcurl reads when the transfer is done: on while a
    /// compressed stream is unfinished, so a body that ends there does not leave its connection
    /// to the next request (the framing said it was complete; the stream says it was not).
    private func forbidReuse(_ forbidden: Bool) {
        _ = curlew_easy_setopt_long(handle, CURLOPT_FORBID_REUSE, forbidden ? 1 : 0)
        reuseForbidden = forbidden
    }

    /// `CURLOPT_READFUNCTION`: fills libcurl's buffer from the request-body source.
    fileprivate func sendBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let source else { return 0 }
        switch source.read(into: buffer) {
        case .bytes(let count):
            return count
        case .pause:
            machine.sendPausedForData()
            return Int(CURL_READFUNC_PAUSE)
        case .abort(let error):
            abortReason = error
            return Int(CURL_READFUNC_ABORT)
        }
    }

    /// `CURLOPT_SEEKFUNCTION`: rewinds a file body; streams cannot seek.
    fileprivate func seekBody(to offset: Int64, origin: Int32) -> Int32 {
        guard origin == SEEK_SET, case .file(let file)? = source, file.seek(to: offset) else { return Int32(CURL_SEEKFUNC_CANTSEEK) }
        return Int32(CURL_SEEKFUNC_OK)
    }

    /// `CURLOPT_XFERINFOFUNCTION` (events only): publishes the counters when they changed, at
    /// most about 60 times a second (libcurl calls it for every chunk: thousands of times for a
    /// large file, each event waking every subscriber) unless a total became known or `final`.
    fileprivate func progressed(downloadTotal: Int64, downloaded: Int64, uploadTotal: Int64, uploaded: Int64, final: Bool = false) {
        let progress = TransferProgress(
            bytesSent: uploaded, totalBytesToSend: uploadTotal > 0 ? uploadTotal : source?.length,
            bytesReceived: downloaded, totalBytesToReceive: downloadTotal > 0 ? downloadTotal : nil)
        guard progress != lastProgress, let events else { return }
        let now = EngineClock.now()
        let totalsChanged = progress.totalBytesToSend != lastProgress.totalBytesToSend
            || progress.totalBytesToReceive != lastProgress.totalBytesToReceive
        guard final || totalsChanged || now &- lastProgressAt >= Self.progressInterval else { return }
        lastProgress = progress
        lastProgressAt = now
        events.progress(progress)
    }

    /// The shortest time between two progress events of one transfer: 1/60 s, in nanoseconds.
    static let progressInterval: UInt64 = 16_666_667

    // MARK: Engine commands (engine thread)

    /// An `.unpause` command: un-pauses the directions whose side is ready again.
    func unpause() {
        let wasPaused = machine.phase == .paused
        guard let state = machine.resume(receiveReady: sink.acceptsMore, sendReady: source?.isReadable ?? true) else { return }
        if wasPaused, !state.receive { statistics.receiveResumed() }
        // libcurl may deliver the held chunk from inside this call, pausing again.
        _ = curl_easy_pause(handle, (state.receive ? CURLPAUSE_RECV : 0) | (state.send ? CURLPAUSE_SEND : 0))
    }

    /// Marks the transfer attached; `false` when it already ended.
    func attach() -> Bool { machine.attach() }

    // MARK: Idle detection (engine thread)

    /// Samples the byte counters; returns the idle-timeout error once no byte moved for longer
    /// than the request's idle timeout. A transfer paused by Curlew (a slow reader, a slow body
    /// producer) is not idle: its clock restarts.
    func idleFailure(now: UInt64) -> CurlewError? {
        guard var tracker = idleTracker else { return nil }
        if machine.isPaused {
            idleTracker = IdleTracker(timeoutNanoseconds: tracker.timeoutNanoseconds, now: now)
            return nil
        }
        var received: curl_off_t = 0
        var sent: curl_off_t = 0
        _ = curlew_easy_getinfo_off_t(handle, CURLINFO_SIZE_DOWNLOAD_T, &received)
        _ = curlew_easy_getinfo_off_t(handle, CURLINFO_SIZE_UPLOAD_T, &sent)
        let expired = tracker.observe(bytesMoved: Int64(received) &+ Int64(sent) &+ Int64(head.bytesSeen), now: now)
        idleTracker = tracker
        guard expired else { return nil }
        let limit = EasyHandleOptions.milliseconds(request.options.idleTimeout ?? .zero)
        var error = CurlewError(code: .idleTimeout, message: "no data moved for \(limit) ms", request: request.summary)
        attachMetrics(to: &error, curlCode: nil)
        return error
    }

    // MARK: Completion

    /// Hands the continuation out exactly once; later calls get `nil`.
    private func takeContinuation() -> Continuation? {
        defer { continuation = nil }
        return continuation
    }

    /// The transfer is over with `error` (cancelled, shut down, timed out, refused): the caller
    /// or the stream gets it, a partial file is removed, a body producer stops. Any thread that
    /// owns the transfer (the engine thread once submitted). Later outcomes are ignored.
    func fail(_ error: CurlewError) {
        let wasPaused = machine.phase == .paused
        let action = machine.fail()
        if wasPaused { statistics.receiveResumed() }
        source?.close()
        switch action {
        case .none:
            return
        case .failCaller:
            sink.fail(error)
            takeContinuation()?.resume(throwing: error)
        case .failStream:
            sink.fail(error)
        }
    }

    /// libcurl reports the transfer done with `code` (engine thread, after the handle was
    /// removed from the multi handle).
    func complete(_ code: CURLcode) {
        if var error = failure(for: code) {
            attachMetrics(to: &error, curlCode: code)
            fail(error)
            return
        }
        let wasPaused = machine.phase == .paused
        let action = machine.complete()
        if wasPaused { statistics.receiveResumed() }
        source?.close()
        switch action {
        case .none:
            return
        case .endStream:
            reportFinalProgress()
            _ = sink.finish(measured: { self.metrics() })
        case .resumeCaller(let reportHeadNow):
            let status = responseCode()
            if reportHeadNow { reportHead(status: status) }
            reportFinalProgress()
            if sink.wantsHead { sink.headArrived(status: status, headerBlock: head.block) }
            if let error = sink.finish() {
                takeContinuation()?.resume(throwing: error)
                return
            }
            // Streams report no metrics (documented on CurlTransport); only redirects need the
            // effective URL.
            let metrics = machine.resumesAtHead ? nil : metrics()
            let url: String
            if let metrics {
                url = metrics.redirectCount > 0 ? effectiveURL() : request.url
            } else {
                url = effectiveURL()
            }
            takeContinuation()?.resume(returning: CompletedTransfer(
                status: status, headerBlock: head.block, content: sink.content(), url: url, metrics: metrics))
        }
    }

    /// The error for a finished transfer's result code, `nil` for success.
    private func failure(for code: CURLcode) -> CurlewError? {
        if let abortReason { return abortReason }
        if code == CURLE_OK, let decoder, !decoder.ended {
            return CurlewError(
                code: .protocolError,
                message: "the response's \(decoder.coding.rawValue) body ended before its compressed stream did (truncated)",
                request: request.summary)
        }
        if code == CURLE_OK || code == CURLE_PARTIAL_FILE, framing.sawStatusLine, !framing.headComplete {
            return CurlewError(
                code: .protocolError, message: "the response head ended without its blank line (the connection closed)",
                request: request.summary)
        }
        if code == CURLE_FILESIZE_EXCEEDED {
            let limit = request.options.maximumBodySize
            return CurlewError(code: .bodyTooLarge, message: "response body exceeds the maximum of \(limit) bytes", request: request.summary)
        }
        guard code == CURLE_OK else {
            let detail = String(cString: errorBuffer)
            var error = CurlResultMapping.error(for: code, detail: detail, facts: failureFacts(), request: request.summary)
            if let (refined, message) = CurlConnectionDiagnosis.code(for: code, handle: handle) {
                error.code = refined
                if let message { error.message = message }
            }
            return error
        }
        return nil
    }

    /// libcurl's state for a failed transfer, to classify its result code.
    private func failureFacts() -> CurlResultMapping.Facts {
        var pretransfer: curl_off_t = 0
        var connect: curl_off_t = 0
        _ = curlew_easy_getinfo_off_t(handle, CURLINFO_PRETRANSFER_TIME_T, &pretransfer)
        _ = curlew_easy_getinfo_off_t(handle, CURLINFO_CONNECT_TIME_T, &connect)
        let options = request.options
        return CurlResultMapping.Facts(
            connected: pretransfer > 0 || connect > 0 || head.bytesSeen > 0,
            responseCode: responseCode(),
            totalTimeoutBeforeConnectTimeout: options.totalTimeout.map { $0 < options.connectTimeout } ?? false)
    }

    /// `CURLINFO_RESPONSE_CODE` of the last response.
    private func responseCode() -> Int {
        var status = 0
        _ = curlew_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return status
    }

    /// `CURLINFO_EFFECTIVE_URL`: the URL after libcurl's redirects.
    private func effectiveURL() -> String {
        // libcurl follows no redirects (Curlew does), so the URL it used is the request's.
        if sendsRequestTarget { return request.url }
        var effective: UnsafePointer<CChar>? = nil
        _ = curlew_easy_getinfo_string(handle, CURLINFO_EFFECTIVE_URL, &effective)
        return effective.map { String(cString: $0) } ?? request.url
    }

    /// Publishes `headReceived` for a final head (not for a hop Curlew follows itself).
    private func reportHead(status: Int) {
        guard let events else { return }
        if followsRedirectsInSwift, RedirectFollower.isRedirect(status) { return }
        events.headReceived(status: HTTPResponse.Status(code: status))
    }

    /// The last progress callback may precede the last bytes; report the final counters.
    private func reportFinalProgress() {
        guard events != nil else { return }
        var downloadTotal: curl_off_t = -1
        var downloaded: curl_off_t = 0
        var uploadTotal: curl_off_t = -1
        var uploaded: curl_off_t = 0
        _ = curlew_easy_getinfo_off_t(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &downloadTotal)
        _ = curlew_easy_getinfo_off_t(handle, CURLINFO_SIZE_DOWNLOAD_T, &downloaded)
        _ = curlew_easy_getinfo_off_t(handle, CURLINFO_CONTENT_LENGTH_UPLOAD_T, &uploadTotal)
        _ = curlew_easy_getinfo_off_t(handle, CURLINFO_SIZE_UPLOAD_T, &uploaded)
        progressed(downloadTotal: Int64(downloadTotal), downloaded: Int64(downloaded), uploadTotal: Int64(uploadTotal), uploaded: Int64(uploaded), final: true)
    }

    /// libcurl's timings and counters for the finished transfer.
    private func metrics() -> TransferMetrics {
        func duration(_ info: CURLINFO) -> Duration {
            var microseconds: curl_off_t = 0
            _ = curlew_easy_getinfo_off_t(handle, info, &microseconds)
            return .microseconds(Int64(microseconds))
        }
        func long(_ info: CURLINFO) -> Int {
            var value = 0
            _ = curlew_easy_getinfo_long(handle, info, &value)
            return value
        }
        func offset(_ info: CURLINFO) -> Int64 {
            var value: curl_off_t = 0
            _ = curlew_easy_getinfo_off_t(handle, info, &value)
            return Int64(value)
        }
        return TransferMetrics(
            nameLookup: duration(CURLINFO_NAMELOOKUP_TIME_T),
            connect: duration(CURLINFO_CONNECT_TIME_T),
            tlsHandshake: duration(CURLINFO_APPCONNECT_TIME_T),
            firstByte: duration(CURLINFO_STARTTRANSFER_TIME_T),
            total: duration(CURLINFO_TOTAL_TIME_T),
            bytesSent: Int64(long(CURLINFO_REQUEST_SIZE)) + offset(CURLINFO_SIZE_UPLOAD_T),
            bytesReceived: Int64(long(CURLINFO_HEADER_SIZE)) + offset(CURLINFO_SIZE_DOWNLOAD_T),
            reusedConnection: long(CURLINFO_NUM_CONNECTS) == 0,
            httpVersion: Self.versionName(long(CURLINFO_HTTP_VERSION)),
            redirectCount: long(CURLINFO_REDIRECT_COUNT),
            pretransfer: duration(CURLINFO_PRETRANSFER_TIME_T),
            remoteAddress: string(CURLINFO_PRIMARY_IP),
            remotePort: long(CURLINFO_PRIMARY_PORT))
    }

    /// `CURLINFO_*` strings (nil when empty).
    private func string(_ info: CURLINFO) -> String? {
        var value: UnsafePointer<CChar>? = nil
        _ = curlew_easy_getinfo_string(handle, info, &value)
        guard let value, value.pointee != 0 else { return nil }
        return String(cString: value)
    }

    /// Gives a failed transfer's error what libcurl measured and the phase that failed
    /// (a failure in one of libcurl's connect steps reports no reuse: nothing was connected).
    private func attachMetrics(to error: inout CurlewError, curlCode: CURLcode?) {
        guard error.metrics == nil else { return }
        var measured = metrics()
        if measured.connect == .zero, measured.pretransfer == .zero { measured.reusedConnection = false }
        error.metrics = measured
        if error.transportPhase == nil, error.level == .transport {
            error.transportPhase = CurlewError.TransportPhase.infer(
                curlCode: curlCode, metrics: measured, isTLS: request.url.lowercased().hasPrefix("https:"))
        }
    }

    /// `CURLINFO_HTTP_VERSION` as ``TransferMetrics/httpVersion`` spells it.
    static func versionName(_ version: Int) -> String {
        switch version {
        case Int(CURL_HTTP_VERSION_1_0): "1.0"
        case Int(CURL_HTTP_VERSION_1_1): "1.1"
        case Int(CURL_HTTP_VERSION_2_0): "2"
        case Int(CURL_HTTP_VERSION_3): "3"
        default: "1.1"
        }
    }

    // MARK: Option helpers

    private func set(_ option: CURLoption, _ value: Int) throws(CurlewError) {
        try check(curlew_easy_setopt_long(handle, option, value), option)
    }

    private func set(_ option: CURLoption, offset value: curl_off_t) throws(CurlewError) {
        try check(curlew_easy_setopt_off_t(handle, option, value), option)
    }

    private func set(_ option: CURLoption, _ value: String) throws(CurlewError) {
        // `withCString` lends a native string's own NUL-terminated storage; the implicit
        // String-to-pointer conversion copies it into a new array first.
        let handle = self.handle
        try check(value.withCString { curlew_easy_setopt_string(handle, option, $0) }, option)
    }

    private func set(_ option: CURLoption, pointer value: UnsafeMutableRawPointer?) throws(CurlewError) {
        try check(curlew_easy_setopt_pointer(handle, option, value), option)
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

}

/// `CURLOPT_WRITEFUNCTION`: forwards body bytes to the transfer named by the user pointer.
let curlewWriteCallback: curlew_data_callback = { bytes, size, count, user in
    guard let user else { return 0 }
    let transfer = Unmanaged<CurlEasyTransfer>.fromOpaque(user).takeUnretainedValue()
    return transfer.receiveBody(UnsafeRawBufferPointer(start: bytes, count: size * count))
}

/// `CURLOPT_HEADERFUNCTION`: forwards one header line to the transfer named by the user pointer.
let curlewHeaderCallback: curlew_data_callback = { bytes, size, count, user in
    guard let user else { return 0 }
    let transfer = Unmanaged<CurlEasyTransfer>.fromOpaque(user).takeUnretainedValue()
    return transfer.receiveHeader(UnsafeRawBufferPointer(start: bytes, count: size * count))
}

/// `CURLOPT_READFUNCTION`: fills libcurl's buffer from the transfer's request-body source.
private let curlewReadCallback: curlew_data_callback = { bytes, size, count, user in
    guard let user else { return Int(CURL_READFUNC_ABORT) }
    let transfer = Unmanaged<CurlEasyTransfer>.fromOpaque(user).takeUnretainedValue()
    return transfer.sendBody(into: UnsafeMutableRawBufferPointer(start: bytes, count: size * count))
}

/// `CURLOPT_SEEKFUNCTION`: rewinds a file body for libcurl to send it again.
private let curlewSeekCallback: curlew_seek_callback = { user, offset, origin in
    guard let user else { return Int32(CURL_SEEKFUNC_CANTSEEK) }
    let transfer = Unmanaged<CurlEasyTransfer>.fromOpaque(user).takeUnretainedValue()
    return transfer.seekBody(to: Int64(offset), origin: origin)
}

/// `CURLOPT_PREREQFUNCTION` (installed only for requests libcurl must not resend): one call per attempt.
private let curlewPrereqCallback: curlew_prereq_callback = { user, _, _, _, _ in
    guard let user else { return Int32(CURL_PREREQFUNC_OK) }
    let transfer = Unmanaged<CurlEasyTransfer>.fromOpaque(user).takeUnretainedValue()
    return transfer.aboutToSend()
}

/// `CURLOPT_XFERINFOFUNCTION` (installed only when someone listens): reports changed counters.
private let curlewProgressCallback: curlew_xferinfo_callback = { user, downloadTotal, downloaded, uploadTotal, uploaded in
    guard let user else { return 0 }
    let transfer = Unmanaged<CurlEasyTransfer>.fromOpaque(user).takeUnretainedValue()
    transfer.progressed(downloadTotal: Int64(downloadTotal), downloaded: Int64(downloaded), uploadTotal: Int64(uploadTotal), uploaded: Int64(uploaded))
    return 0
}
