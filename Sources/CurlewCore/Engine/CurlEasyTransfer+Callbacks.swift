package import CCurlShim
internal import Foundation

/// libcurl's callbacks, on the engine thread inside `curl_multi_perform`. Each one turns what
/// libcurl reports into an event for the transfer's state machine and performs the action.
extension CurlEasyTransfer {
    /// `CURLOPT_HEADERFUNCTION`: one header line of any response (redirects and 1xx included).
    package func receiveHeader(_ bytes: UnsafeRawBufferPointer) -> Int {
        switch head.consume(line: bytes) {
        case .status:
            framing.startHead()
            return bytes.count
        case .trailer:
            return bytes.count
        case .field:
            break
        }
        if let violation = framing.consume(line: bytes) {
            // Aborting here makes libcurl close the connection rather than cache it.
            machine.abort(CurlewError(code: .protocolError, message: violation, request: request.summary))
            return 0
        }
        return bytes.count
    }

    /// `CURLOPT_PREREQFUNCTION` (guarded requests and empty file bodies only): libcurl is about
    /// to send an attempt.
    package func aboutToSend() -> Int32 {
        // libcurl never reads an empty body, so an empty file that grew since it was opened is
        // refused here, before the request goes out — as a longer one is at its last bytes.
        if case .file(let file)? = machine.source, let change = file.emptyFileChange {
            machine.abort(CurlewError(code: .fileUnreadable, message: change, request: request.summary))
            return Int32(CURL_PREREQFUNC_ABORT)
        }
        var redirects = 0
        _ = curlew_easy_getinfo_long(handle, CURLINFO_REDIRECT_COUNT, &redirects)
        guard var guardState = replayGuard else { return Int32(CURL_PREREQFUNC_OK) }
        let allowed = guardState.allowsAttempt(redirects: redirects)
        replayGuard = guardState
        guard allowed else {
            machine.abort(
                CurlewError(
                    code: .connectionClosedBeforeResponse,
                    message: "the connection closed before a response; \(request.method.rawValue) is not sent again automatically",
                    request: request.summary))
            return Int32(CURL_PREREQFUNC_ABORT)
        }
        return Int32(CURL_PREREQFUNC_OK)
    }

    /// `CURLOPT_WRITEFUNCTION`: body bytes of the final response. The first call completes the
    /// head; the sink then decides to take, pause or abort, and a followed redirect's body is
    /// dropped unread.
    package func receiveBody(_ bytes: UnsafeRawBufferPointer) -> Int {
        if case .awaitingHead = machine.state, !headCompleted() { return 0 }
        switch machine.bodyChunk(count: bytes.count) {
        case .discard:
            return bytes.count
        case .stop:
            return 0
        case .deliver(let sink):
            let decision: SinkDecision
            if let decoder {
                decision = decoder.decode(bytes, into: sink)
                if decoder.ended == pooled.forbidsReuse { forbidReuse(!decoder.ended) }
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
                machine.abort(CurlewError(code: code, message: message, request: request.summary))
                return 0
            }
        }
    }

    /// The final head is complete (the first body byte arrived): the sink learns the length and
    /// the head, the head is reported, a streaming caller is resumed, and a content decoder is
    /// chosen. Returns `false` when the transfer must stop (a coding Curlew refuses).
    private func headCompleted() -> Bool {
        let status = responseCode()
        let sink: any ResponseBodySink
        switch machine.headComplete(isFollowedRedirect: isFollowedRedirect(status: status)) {
        case .none, .skipHop:
            return true
        case .deliverHead(let receiving):
            sink = receiving
            announceHead(to: sink, status: status)
        case .resumeCallerWithStream(let continuation, let streaming):
            sink = streaming
            announceHead(to: sink, status: status)
            continuation.resume(
                returning: CompletedTransfer(
                    status: status, headerBlock: head.block, content: sink.content(), url: effectiveURL(), metrics: nil))
        }
        // After the head went out: a streamed caller then gets the refusal from its stream.
        guard !framing.contentCodings.isEmpty, request.options.acceptsCompressedResponses else { return true }
        switch ResponseContentDecoder.choose(for: framing.contentCodings) {
        case .none:
            return true
        case .decode(let made):
            decoder = made
            return true
        case .refuse(let reason):
            machine.abort(CurlewError(code: .protocolError, message: reason, request: request.summary))
            return false
        }
    }

    /// Tells `sink` the announced length and (when it asks) the head, and reports the head.
    private func announceHead(to sink: any ResponseBodySink, status: Int) {
        var length: curl_off_t = -1
        _ = curlew_easy_getinfo_off_t(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
        sink.expect(contentLength: length > 0 ? Int(length) : nil)
        if sink.wantsHead { sink.headArrived(status: status, headerBlock: head.block) }
        reportHead(status: status)
    }

    /// Sets `CURLOPT_FORBID_REUSE`, which libcurl reads when the transfer is done: on while a
    /// compressed stream is unfinished, so a body that ends there does not leave its connection
    /// to the next request (the framing said it was complete; the stream says it was not).
    private func forbidReuse(_ forbidden: Bool) {
        _ = curlew_easy_setopt_long(handle, CURLOPT_FORBID_REUSE, forbidden ? 1 : 0)
        pooled.noteForbidsReuse(forbidden)
    }

    /// `CURLOPT_READFUNCTION`: fills libcurl's buffer from the request-body source.
    package func sendBody(into buffer: UnsafeMutableRawBufferPointer) -> Int {
        guard let source = machine.source else { return Int(CURL_READFUNC_ABORT) }
        switch source.read(into: buffer) {
        case .bytes(let count):
            return count
        case .pause:
            machine.sendPausedForData()
            return Int(CURL_READFUNC_PAUSE)
        case .abort(let error):
            machine.abort(error)
            return Int(CURL_READFUNC_ABORT)
        }
    }

    /// `CURLOPT_SEEKFUNCTION`: rewinds a file body; streams cannot seek.
    package func seekBody(to offset: Int64, origin: Int32) -> Int32 {
        guard origin == SEEK_SET, case .file(let file)? = machine.source, file.seek(to: offset) else {
            return Int32(CURL_SEEKFUNC_CANTSEEK)
        }
        return Int32(CURL_SEEKFUNC_OK)
    }

    /// `CURLOPT_XFERINFOFUNCTION` (events only): publishes the counters when they changed, at
    /// most about 60 times a second (libcurl calls it for every chunk: thousands of times for a
    /// large file, each event waking every subscriber) unless a total became known or `final`.
    package func progressed(downloadTotal: Int64, downloaded: Int64, uploadTotal: Int64, uploaded: Int64, final: Bool = false) {
        let progress = TransferProgress(
            bytesSent: uploaded, totalBytesToSend: uploadTotal > 0 ? uploadTotal : machine.source?.length,
            bytesReceived: downloaded, totalBytesToReceive: downloadTotal > 0 ? downloadTotal : nil)
        guard progress != lastProgress, let events else { return }
        let now = EngineClock.now()
        let totalsChanged =
            progress.totalBytesToSend != lastProgress.totalBytesToSend
            || progress.totalBytesToReceive != lastProgress.totalBytesToReceive
        guard final || totalsChanged || now &- lastProgressAt >= Self.progressInterval else { return }
        lastProgress = progress
        lastProgressAt = now
        events.progressed(progress)
    }

    /// The last progress callback may precede the last bytes; report the final counters.
    package func reportFinalProgress() {
        guard events != nil else { return }
        let info = CurlTransferInfo(handle: handle)
        progressed(
            downloadTotal: info.offset(CURLINFO_CONTENT_LENGTH_DOWNLOAD_T), downloaded: info.offset(CURLINFO_SIZE_DOWNLOAD_T),
            uploadTotal: info.offset(CURLINFO_CONTENT_LENGTH_UPLOAD_T), uploaded: info.offset(CURLINFO_SIZE_UPLOAD_T), final: true)
    }

    /// The shortest time between two progress events of one transfer: 1/60 s, in nanoseconds.
    package static let progressInterval: UInt64 = 16_666_667
}

/// libcurl's callbacks into a transfer, named by the user pointer. They are static members rather
/// than globals: a global of a C function-pointer type crashes the symbol extraction that builds
/// the documentation (swift-symbolgraph-extract, Swift 6.3.1).
package enum CurlCallbacks {
    /// `CURLOPT_WRITEFUNCTION`: forwards body bytes to the transfer named by the user pointer.
    package static let write: curlew_data_callback = { bytes, size, count, user in
        guard let user else { return 0 }
        let transfer = Unmanaged<CurlEasyTransfer>.fromOpaque(user).takeUnretainedValue()
        return transfer.receiveBody(UnsafeRawBufferPointer(start: bytes, count: size * count))
    }

    /// `CURLOPT_HEADERFUNCTION`: forwards one header line to the transfer named by the user pointer.
    package static let header: curlew_data_callback = { bytes, size, count, user in
        guard let user else { return 0 }
        let transfer = Unmanaged<CurlEasyTransfer>.fromOpaque(user).takeUnretainedValue()
        return transfer.receiveHeader(UnsafeRawBufferPointer(start: bytes, count: size * count))
    }

    /// `CURLOPT_READFUNCTION`: fills libcurl's buffer from the transfer's request-body source.
    package static let read: curlew_data_callback = { bytes, size, count, user in
        guard let user else { return Int(CURL_READFUNC_ABORT) }
        let transfer = Unmanaged<CurlEasyTransfer>.fromOpaque(user).takeUnretainedValue()
        return transfer.sendBody(into: UnsafeMutableRawBufferPointer(start: bytes, count: size * count))
    }

    /// `CURLOPT_SEEKFUNCTION`: rewinds a file body for libcurl to send it again.
    package static let seek: curlew_seek_callback = { user, offset, origin in
        guard let user else { return Int32(CURL_SEEKFUNC_CANTSEEK) }
        let transfer = Unmanaged<CurlEasyTransfer>.fromOpaque(user).takeUnretainedValue()
        return transfer.seekBody(to: Int64(offset), origin: origin)
    }

    /// `CURLOPT_PREREQFUNCTION` (installed only for requests libcurl must not resend): one call per attempt.
    package static let prereq: curlew_prereq_callback = { user, _, _, _, _ in
        guard let user else { return Int32(CURL_PREREQFUNC_OK) }
        let transfer = Unmanaged<CurlEasyTransfer>.fromOpaque(user).takeUnretainedValue()
        return transfer.aboutToSend()
    }

    /// `CURLOPT_XFERINFOFUNCTION` (installed only when someone listens): reports changed counters.
    package static let progress: curlew_xferinfo_callback = { user, downloadTotal, downloaded, uploadTotal, uploaded in
        guard let user else { return 0 }
        let transfer = Unmanaged<CurlEasyTransfer>.fromOpaque(user).takeUnretainedValue()
        transfer.progressed(
            downloadTotal: Int64(downloadTotal), downloaded: Int64(downloaded), uploadTotal: Int64(uploadTotal), uploaded: Int64(uploaded))
        return 0
    }
}
