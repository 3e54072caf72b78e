/// Feeds a ``TransferProgressMonitor`` from the call's progress events (installed by
/// ``RequestOptions/reportProgress(to:)``). Its phase places it outside every built-in
/// middleware, so it sees the whole call once — retries included — and ends the monitor when the
/// call ends.
struct ProgressMiddleware: APIMiddleware {
    /// Outermost: above the cache.
    static let phase = MiddlewarePhase(rank: 50, name: "progress")

    /// The kind every progress reporter declares (what ``AccessoryProgress`` looks for).
    static let kind = MiddlewareKind("progress")

    let monitor: TransferProgressMonitor

    var kind: MiddlewareKind { Self.kind }
    var phase: MiddlewarePhase? { Self.phase }

    nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        let download: DownloadTarget? = if case .download(let target) = context.responseBody.storage { target } else { nil }
        let resumed = download?.resumeOffset.map { (offset: $0, validator: download?.storedValidator ?? "", announced: download?.storedCompleteLength) }
        let verdict = download?.verdict
        // A resumed download exchange the download may start over (a changed file): its end is
        // not the call's end; the next exchange goes on reporting to the same monitor.
        let mayRestart = context.options.mayStartOver
        let monitor = self.monitor
        // The call's accessories also get every value the monitor delivers: from the outermost
        // reporter only, which takes the observer out of the options it passes on.
        let observer = context.options[AccessoryProgress.ObserverKey.self]
        var context = context
        if observer != nil { context.options[AccessoryProgress.ObserverKey.self] = nil }
        let id = context.requestID
        // Subscribing makes the engine report progress for this client's transfers.
        let events = context.events.broadcaster?.subscribe(bufferingNewest: 16)
        let watcher = Task {
            guard let events else { return }
            for await event in events where event.requestID == id {
                guard event.kind == .progress, let progress = event.progress else { continue }
                // The bytes on disk count only once the sink took an answer that continues them
                // (a `206` of the same version from the resume offset): a `200` to a range request
                // is the whole file again, written from byte 0, and a refused `206` counts for
                // nothing — the download starts over, and the bar follows it from its first
                // values instead of waiting at the old offset. Until its head is decided, a
                // resumed exchange shows nothing.
                let offset: Int64
                switch verdict?.value {
                case .continues(let bytes)?: offset = bytes
                case .refused?: continue
                case .undecided?:
                    guard resumed == nil else { continue }
                    offset = 0
                case nil: offset = 0
                }
                monitor.offer(Self.update(progress, offset: offset), notifying: observer)
            }
        }
        defer { watcher.cancel() }
        do {
            let raw = try await next(request, context)
            if raw.status.code == 416, let resumed {
                // The partial file is the whole file, or the download starts over.
                if APIClient.completesPartial(raw, offset: resumed.offset, validator: resumed.validator, announced: resumed.announced) {
                    let whole = TransferProgress(bytesReceived: resumed.offset, totalBytesToReceive: resumed.offset)
                    monitor.finish(with: whole, notifying: observer)
                } else if !mayRestart {
                    monitor.finish(with: nil, notifying: observer)
                }
                return raw
            }
            // A part of the file: the next exchange asks for the rest and goes on reporting.
            if download != nil, APIClient.endsBeforeTheResource(raw) { return raw }
            monitor.finish(with: Self.final(raw, request: request), notifying: observer)
            return raw
        } catch {
            if !(mayRestart && (error as? CurlewError)?.startsDownloadOver == true) {
                monitor.finish(with: nil, notifying: observer)
            }
            throw error
        }
    }

    /// A progress event as the monitor's value: a resumed download counts the bytes already on
    /// disk as received (`offset`, 0 once the answer turned out to be the whole file).
    static func update(_ progress: TransferProgress, offset: Int64) -> TransferProgress {
        var update = progress
        update.bytesReceived += offset
        update.totalBytesToReceive = progress.totalBytesToReceive.map { $0 + offset }
        return update
    }

    /// The last value: the whole request body and the whole response body (left to the last
    /// event for a stream, whose body is still coming when the call ends at the head).
    static func final(_ raw: RawResponse, request: PreparedRequest) -> TransferProgress {
        var final = TransferProgress()
        if let length = request.content?.length {
            final.bytesSent = length
            final.totalBytesToSend = length
        }
        switch raw.content {
        case .data(let data):
            final.bytesReceived = Int64(data.count)
            final.totalBytesToReceive = Int64(data.count)
        case .file(_, let length):
            final.bytesReceived = length
            final.totalBytesToReceive = length
        case .stream: break
        }
        return final
    }
}

extension RequestOptions {
    /// Reports this call's progress to `monitor` (an `AsyncSequence` of
    /// ``/CurlewCore/TransferProgress``), ending it when the call ends.
    ///
    /// ```swift
    /// try await client.send(UploadPhoto(file: path)) { $0.reportProgress(to: progress) }
    /// ```
    public mutating func reportProgress(to monitor: TransferProgressMonitor) {
        middleware.append(ProgressMiddleware(monitor: monitor))
    }
}
