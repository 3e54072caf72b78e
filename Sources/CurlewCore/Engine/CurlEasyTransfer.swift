package import CCurlShim
internal import Foundation
internal import HTTPTypes

/// One exchange on one easy handle: it owns the handle while the exchange lasts, feeds libcurl's
/// callbacks and the engine's commands to its ``TransferStateMachine`` as events, and performs
/// the actions the machine returns. The machine holds the caller's continuation, the body sink
/// and source and the abort reason; this class holds what libcurl needs beside them.
///
/// The code is in three parts: this file (creation, ending, engine commands), the handle's
/// configuration (`CurlEasyTransfer+Configuration.swift`, over ``EasyHandleSettings``) and the
/// libcurl callbacks (`CurlEasyTransfer+Callbacks.swift`).
///
/// Created and configured on the caller's thread, then handed to the engine thread through the
/// inbox mutex; from then on only the engine thread touches it (the handle is never used by two
/// threads at once, which is all libcurl asks). That hand-off is why it is `@unchecked Sendable`:
/// every stored property is written on the caller's thread before the hand-off and on the engine
/// thread after it (or, for a transfer rejected before submission, only on the caller's thread).
/// The sinks and the request-body pump that other threads reach have their own mutexes.
///
/// The mutable properties are `@exclusivity(unchecked)`: one thread at a time touches them (the
/// confinement above), and none is reached again while it is being modified (the libcurl
/// callbacks run inside `curl_multi_perform`, never inside a method that modifies a property), so
/// the runtime's dynamic exclusivity check would guard nothing here.
package final class CurlEasyTransfer: @unchecked Sendable {
    /// The caller's continuation. Unsafe rather than checked: the state machine already makes a
    /// second resumption impossible, and a checked one allocates a canary per request.
    package typealias Continuation = UnsafeContinuation<CompletedTransfer, any Error>

    package let id: UInt64
    package let request: PreparedRequest
    package let handle: UnsafeMutableRawPointer
    package let pool: EasyHandlePool
    /// The handle with the settings and header list it carries; goes back to the pool on deinit.
    package let pooled: PooledEasyHandle
    package let errorBuffer: UnsafeMutablePointer<CChar>
    @exclusivity(unchecked) package var machine: TransferStateMachine<Continuation>
    /// Every response head's lines (redirect hops and 1xx included; the block is the last one's).
    @exclusivity(unchecked) package var head = ResponseHeadParser()
    /// Framing checks of each response head (``ResponseFraming``).
    @exclusivity(unchecked) package var framing = ResponseFraming()
    /// Present while a compressed body is decoded (``ResponseContentDecoder``).
    @exclusivity(unchecked) package var decoder: ResponseContentDecoder?
    /// Present for requests libcurl must not resend by itself (``ReplayGuard``).
    @exclusivity(unchecked) package var replayGuard: ReplayGuard?
    package let statistics: EngineStatistics
    /// Whether the client follows redirects (``TransferPlan/followsRedirects``): a redirect head
    /// with a `Location` is a hop, its body dropped unread and its head not reported.
    package let followsRedirects: Bool
    /// Present only when someone listens to the call's events.
    package let events: (any TransferObserver)?
    /// The counters last reported as progress (events only).
    @exclusivity(unchecked) package var lastProgress = TransferProgress()
    /// When progress was last reported (``EngineClock``), for the ~60-a-second throttle.
    @exclusivity(unchecked) package var lastProgressAt: UInt64 = 0
    /// Present when the request has an idle timeout; sampled by the engine.
    @exclusivity(unchecked) package var idleTracker: IdleTracker?
    /// Present when the request has a head timeout, until the first byte of a response head
    /// arrives: it sees only bytes sent, so it fires once nothing was sent and nothing received
    /// for that long (the server's time to first byte after the last byte of the request).
    @exclusivity(unchecked) package var headWatch: HeadWatch?
    /// The cookie jar and host overrides the handle points at (``CurlConnectionOptions``).
    @exclusivity(unchecked) package var connection: CurlConnectionAttachment?
    /// The request's origin for the engine's per-host queues (``HostQueues/origin(of:)``), set
    /// when the engine has a per-host cap.
    @exclusivity(unchecked) package var origin: UInt64 = 0
    /// When the transfer began waiting in a per-host queue (``EngineClock``), 0 when it is not.
    @exclusivity(unchecked) package var queuedAt: UInt64 = 0
    /// Time the call already spent before its current attempt (waiting in a queue, earlier
    /// connection attempts and their back-off), in nanoseconds: taken off its total timeout.
    @exclusivity(unchecked) package var elapsedBefore: UInt64 = 0
    /// Connection attempts made so far (``ConnectRetryPolicy``).
    @exclusivity(unchecked) package var connectAttempts = 1

    /// Takes an easy handle from the pool and configures it; throws if libcurl refuses an option,
    /// if the download file cannot be created or the upload file cannot be opened. A transfer
    /// that throws here has already given its sink and source back; its caller is not resumed.
    package init(
        id: UInt64, request: PreparedRequest, plan: TransferPlan, engine: CurlEngine,
        pool: EasyHandlePool, continuation: Continuation
    ) throws(CurlewError) {
        let disposition = plan.sink
        let parties = try TransferParties(request: request, disposition: disposition, id: id, engine: engine)
        guard let pooled = pool.take() else {
            let error = CurlewError(code: .transportFailure, message: "curl_easy_init failed", request: request.summary)
            parties.sink.fail(error)
            parties.source?.close()
            throw error
        }
        self.id = id
        self.request = request
        self.handle = pooled.handle
        self.pooled = pooled
        self.pool = pool
        self.machine = TransferStateMachine(
            caller: continuation, sink: parties.sink, source: parties.source, resumesAtHead: parties.resumesAtHead)
        self.statistics = engine.statistics
        self.followsRedirects = plan.followsRedirects
        self.events = plan.observer
        self.errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE) + 1)
        self.errorBuffer.initialize(repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
        if let idle = request.options.idleTimeout {
            self.idleTracker = IdleTracker(timeoutNanoseconds: Self.nanoseconds(idle), now: EngineClock.now())
        }
        if let wait = request.options.headTimeout {
            self.headWatch = HeadWatch(timeoutNanoseconds: Self.nanoseconds(wait), now: EngineClock.now())
        }
        do {
            // A HEAD response has no body, whatever its Content-Length says.
            let collects = if case .collect = disposition { true } else { false }
            try configure(limitsBody: collects && request.method != .head, lowSpeed: parties.lowSpeed, source: parties.source)
        } catch {
            parties.sink.fail(error)
            parties.source?.close()
            throw error
        }
        if case .stream(let stream)? = request.content, case .stream(let pump)? = parties.source { pump.start(stream) }
    }

    deinit {
        // A transfer dropped without an outcome (never submitted) still stops a body producer
        // and removes a partial file.
        if !machine.isEnded {
            let dropped = CurlewError(code: .cancelled, message: "the transfer was dropped before it ended", request: request.summary)
            if case .failCaller(_, let parties, _) = machine.fail(dropped) {
                parties.source?.close()
                parties.sink.fail(dropped)
            }
        }
        connection?.detach(from: handle)
        pool.recycle(pooled)
        errorBuffer.deallocate()
    }

    // MARK: Ending

    /// The transfer is over with `error` (cancelled, shut down, timed out, refused): the caller
    /// or the stream gets it, a partial file is removed, a body producer stops. Any thread that
    /// owns the transfer (the engine thread once submitted). Later outcomes are ignored.
    ///
    /// `measured`: the handle has been running, so the error carries what libcurl measured so far
    /// (a cancelled stream's metrics count the bytes that did arrive).
    package func fail(_ error: CurlewError, measured: Bool = false) {
        var failure = error
        if measured { attachMetrics(to: &failure, curlCode: nil) }
        perform(machine.fail(failure))
    }

    /// libcurl reports the transfer done with `code` (engine thread, after the handle was
    /// removed from the multi handle).
    package func complete(_ code: CURLcode) {
        var error = failure(for: code)
        if error != nil { attachMetrics(to: &error, curlCode: code) }
        if connectAttempts > 1, var failure = error {
            failure.message += " (after \(connectAttempts) connection attempts)"
            error = failure
        }
        perform(machine.transferEnded(error: error))
    }

    /// Performs what the machine decided when the transfer ended.
    private func perform(_ action: TransferStateMachine<Continuation>.EndAction) {
        switch action {
        case .none:
            return
        case .failCaller(let continuation, let parties, let error):
            parties.source?.close()
            parties.sink.fail(error)
            continuation.resume(throwing: error)
        case .failStream(let parties, let error, let wasPaused):
            if wasPaused { statistics.receiveResumed() }
            parties.source?.close()
            parties.sink.fail(error)
        case .endStream(let parties, let wasPaused):
            if wasPaused { statistics.receiveResumed() }
            parties.source?.close()
            reportFinalProgress()
            _ = parties.sink.finish(measured: { self.metrics() })
        case .succeed(let continuation, let parties, let reportHeadNow):
            parties.source?.close()
            let status = responseCode()
            if reportHeadNow { reportHead(status: status) }
            reportFinalProgress()
            let sink = parties.sink
            if sink.wantsHead { sink.headArrived(status: status, headerBlock: head.block) }
            if let error = sink.finish() {
                continuation.resume(throwing: error)
                return
            }
            // Streams report no metrics (documented on CurlTransport).
            let metrics = machine.resumesAtHead ? nil : metrics()
            continuation.resume(
                returning: CompletedTransfer(
                    status: status, headerBlock: head.block, content: sink.content(), url: effectiveURL(), metrics: metrics))
        }
    }

    /// The error for a finished transfer's result code, `nil` for success.
    private func failure(for code: CURLcode) -> CurlewError? {
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
            // libcurl refuses a body by its announced length before reading it; a followed
            // redirect's body is never read, so its size is no failure.
            if isFollowedRedirect(status: responseCode()) { return nil }
            let limit = request.options.maximumBodySize
            return CurlewError(code: .bodyTooLarge, message: "response body exceeds the maximum of \(limit) bytes", request: request.summary)
        }
        guard code == CURLE_OK else {
            let detail = String(cString: errorBuffer)
            var error = CurlResultMapping.error(for: code, detail: detail, facts: failureFacts(), request: request.summary)
            if let (refined, message) = CurlConnectionDiagnosis.code(for: code, handle: handle) {
                error.code = refined
                if let message { error.message = message }
                if let remedy = CurlConnectionDiagnosis.remedy(for: refined) { error.message += remedy }
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

    /// Gives a failed transfer's error what libcurl measured and the phase that failed (a failure
    /// in one of libcurl's connect steps reports no reuse: nothing was connected).
    private func attachMetrics(to error: inout CurlewError?, curlCode: CURLcode?) {
        guard var failure = error else { return }
        attachMetrics(to: &failure, curlCode: curlCode)
        error = failure
    }

    private func attachMetrics(to error: inout CurlewError, curlCode: CURLcode?) {
        guard error.metrics == nil else { return }
        var measured = metrics()
        if measured.connect == .zero, measured.pretransfer == .zero { measured.reusedConnection = false }
        error.metrics = measured
        if error.transportPhase == nil, error.level == .transport {
            var phase = CurlewError.TransportPhase.infer(
                curlCode: curlCode, metrics: measured, isTLS: request.url.lowercased().hasPrefix("https:"))
            // libcurl stamps its "start transfer" time when an upload's body starts going out, so
            // in the timings a stalled upload looks like a stalled response. When the phase comes
            // from the timings and no byte of a response head arrived, the exchange was sending.
            let fromTimings = CurlewError.TransportPhase.infer(curlCode: curlCode, metrics: nil, isTLS: false) == nil
            if phase == .receive, fromTimings, head.bytesSeen == 0 { phase = .send }
            error.transportPhase = phase
        }
    }

    // MARK: Engine commands (engine thread)

    /// Marks the transfer attached; `false` when it already ended.
    package func attach() -> Bool { machine.attach() }

    /// An `.unpause` command: un-pauses the directions whose side is ready again.
    package func unpause() {
        guard let (state, resumedReceive) = machine.unpause() else { return }
        if resumedReceive { statistics.receiveResumed() }
        // libcurl may deliver the held chunk from inside this call, pausing again.
        _ = curl_easy_pause(handle, (state.receive ? CURLPAUSE_RECV : 0) | (state.send ? CURLPAUSE_SEND : 0))
    }

    /// Samples the byte counters; returns the idle-timeout error once no byte moved for longer
    /// than the request's idle timeout. A transfer paused by Curlew (a slow reader, a slow body
    /// producer) is not idle: its clock restarts.
    package func idleFailure(now: UInt64) -> CurlewError? {
        if headWatch != nil, let failure = headFailure(now: now) { return failure }
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

    /// Samples the bytes sent while no response byte has arrived; returns the head-timeout
    /// error once nothing was sent or received for longer than the request's head timeout. The
    /// watch ends with the first byte of a response head; a transfer paused by Curlew (a slow
    /// body producer) restarts its clock.
    private func headFailure(now: UInt64) -> CurlewError? {
        guard var watch = headWatch else { return nil }
        var sent: curl_off_t = 0
        _ = curlew_easy_getinfo_off_t(handle, CURLINFO_SIZE_UPLOAD_T, &sent)
        let late = watch.observe(headBytes: head.bytesSeen, bytesSent: Int64(sent), paused: machine.isPaused, now: now)
        headWatch = watch.ended ? nil : watch
        guard late else { return nil }
        let limit = EasyHandleOptions.milliseconds(request.options.headTimeout ?? .zero)
        var error = CurlewError(code: .headTimeout, message: "no response head began within \(limit) ms", request: request.summary)
        attachMetrics(to: &error, curlCode: nil)
        return error
    }

    // MARK: Admission (engine thread)

    /// The total-timeout error when the call's total timeout has passed by `now` while it waited
    /// in a per-host queue, `nil` otherwise.
    package func queueTimeout(now: UInt64) -> CurlewError? {
        guard queuedAt != 0, let total = request.options.totalTimeout else { return nil }
        let spent = elapsedBefore &+ (now &- queuedAt)
        guard spent >= Self.nanoseconds(total) else { return nil }
        return totalTimeoutError(total, while: "waiting for a connection to the host (per-host limit)")
    }

    /// Leaves a per-host queue at `now`: the wait is taken off the total timeout, and the idle
    /// clock restarts. Returns the total-timeout error when nothing is left.
    package func leaveQueue(now: UInt64) -> CurlewError? {
        guard queuedAt != 0 else { return nil }
        elapsedBefore &+= now &- queuedAt
        queuedAt = 0
        if let tracker = idleTracker { idleTracker = IdleTracker(timeoutNanoseconds: tracker.timeoutNanoseconds, now: now) }
        headWatch?.restart(now: now)
        return shortenTimeouts()
    }

    /// Sets the handle's total timeout to what is left of the call's after ``elapsedBefore``,
    /// and its connect timeout to no more than that; returns the total-timeout error when
    /// nothing is left.
    package func shortenTimeouts() -> CurlewError? {
        guard elapsedBefore >= 1_000_000 else { return nil }
        let connect = EasyHandleOptions.milliseconds(request.options.connectTimeout)
        guard let total = request.options.totalTimeout else {
            return nil
        }
        let totalNanoseconds = Self.nanoseconds(total)
        guard elapsedBefore < totalNanoseconds else {
            return totalTimeoutError(total, while: "waiting for a connection to the host")
        }
        let left = Int((totalNanoseconds - elapsedBefore) / 1_000_000)
        pooled.overrideTimeouts(totalMilliseconds: left, connectMilliseconds: min(connect, left))
        return nil
    }

    private func totalTimeoutError(_ total: Duration, while what: String) -> CurlewError {
        let limit = EasyHandleOptions.milliseconds(total)
        return CurlewError(code: .totalTimeout, message: "the total timeout of \(limit) ms passed \(what)", request: request.summary)
    }

    /// The delay in nanoseconds before the next connection attempt when the transfer failed with
    /// `code` while connecting — refused, unreachable, TLS handshake reset — with nothing sent or
    /// received, attempts left under `policy` (or the request's
    /// ``TransferOptions/maximumConnectAttempts``) and time left in the call's total timeout; `nil`
    /// otherwise (the transfer then completes with `code`). Counts the attempt and its delay.
    package func connectRetryDelay(for code: CURLcode, policy: ConnectRetryPolicy) -> UInt64? {
        let maximumAttempts = request.options.maximumConnectAttempts ?? policy.maximumAttempts
        guard connectAttempts < maximumAttempts, Self.isConnectFailure(code), machine.canRestart,
            head.bytesSeen == 0
        else { return nil }
        var pretransfer: curl_off_t = 0
        var uploaded: curl_off_t = 0
        var spent: curl_off_t = 0
        _ = curlew_easy_getinfo_off_t(handle, CURLINFO_PRETRANSFER_TIME_T, &pretransfer)
        _ = curlew_easy_getinfo_off_t(handle, CURLINFO_SIZE_UPLOAD_T, &uploaded)
        _ = curlew_easy_getinfo_off_t(handle, CURLINFO_TOTAL_TIME_T, &spent)
        guard pretransfer == 0, uploaded == 0 else { return nil }
        let delay = policy.delayNanoseconds(beforeAttempt: connectAttempts + 1, random: Double.random(in: 0..<1))
        let elapsed = elapsedBefore &+ UInt64(max(0, spent)) &* 1000
        // The next attempt must start with time left to connect (a millisecond at least).
        if let total = request.options.totalTimeout, elapsed &+ delay &+ 1_000_000 >= Self.nanoseconds(total) { return nil }
        elapsedBefore = elapsed &+ delay
        connectAttempts += 1
        if let events {
            let detail = String(cString: errorBuffer)
            let error = CurlResultMapping.error(for: code, detail: detail, facts: failureFacts(), request: request.summary)
            events.connectRetryScheduled(attempt: connectAttempts, delay: .nanoseconds(Int64(delay)), error: error)
        }
        errorBuffer[0] = 0
        return delay
    }

    /// Failures of connection establishment a retry may cure: refused or unreachable
    /// (`CURLE_COULDNT_CONNECT`), the TLS handshake failed or was reset (`CURLE_SSL_CONNECT_ERROR`).
    package static func isConnectFailure(_ code: CURLcode) -> Bool {
        code == CURLE_COULDNT_CONNECT || code == CURLE_SSL_CONNECT_ERROR
    }

    /// Before the next connection attempt (engine thread, at `now`): the idle clock restarts and
    /// the handle gets what is left of the total timeout. Returns the total-timeout error when
    /// nothing is left.
    package func prepareNextAttempt(now: UInt64) -> CurlewError? {
        if let tracker = idleTracker { idleTracker = IdleTracker(timeoutNanoseconds: tracker.timeoutNanoseconds, now: now) }
        headWatch?.restart(now: now)
        return shortenTimeouts()
    }

    /// Whether the finished transfer shared its connection (HTTP/2).
    package var multiplexed: Bool {
        var version = 0
        _ = curlew_easy_getinfo_long(handle, CURLINFO_HTTP_VERSION, &version)
        return version == Int(CURL_HTTP_VERSION_2_0)
    }

    // MARK: Reading libcurl's state

    /// The status of the last response: from its status line, else `CURLINFO_RESPONSE_CODE`.
    package func responseCode() -> Int {
        if head.status != 0 { return head.status }
        var status = 0
        _ = curlew_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        return status
    }

    /// The URL that produced the response: the request's (libcurl follows no redirects).
    package func effectiveURL() -> String { request.url }

    /// libcurl's timings and counters for the transfer so far.
    package func metrics() -> TransferMetrics {
        var measured = CurlTransferInfo(handle: handle).metrics()
        measured.connectionAttempts = connectAttempts
        return measured
    }

    /// Publishes `headReceived` for a final head (not for a redirect hop the client follows).
    package func reportHead(status: Int) {
        guard let events, !isFollowedRedirect(status: status) else { return }
        events.headReceived(status: status)
    }

    /// Whether a head with `status` is a redirect the client follows: a redirect status with a
    /// `Location`, when the client follows redirects.
    package func isFollowedRedirect(status: Int) -> Bool {
        followsRedirects && RedirectStatus.contains(status) && head.hasField(named: "location")
    }

    /// Whole nanoseconds, zero for a negative duration. Saturating: a transfer is made before its
    /// options are checked (``EasyHandleOptions/checkRanges(_:request:)`` then refuses a timeout
    /// this long), so the conversion itself must not trap.
    package static func nanoseconds(_ duration: Duration) -> UInt64 {
        UInt64(max(0, duration.saturatingNanoseconds))
    }
}
