/// Feeds a ``TransferProgressMonitor`` from the call's progress events (installed by
/// ``RequestOptions/reportProgress(to:)``). Its phase places it outside every built-in
/// middleware, so it sees the whole call once — retries included — and ends the monitor when the
/// call ends.
struct ProgressMiddleware: APIMiddleware {
    /// Outermost: above the cache.
    static let phase = MiddlewarePhase(rank: 50, name: "progress")

    let monitor: TransferProgressMonitor
    /// Also gets every value the monitor delivers (the call's accessories, see ``AccessoryProgress``).
    var observer: TransferProgressMonitor.Observer? = nil

    var kind: MiddlewareKind { MiddlewareKind("progress") }
    var phase: MiddlewarePhase? { Self.phase }

    nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        let upload = request.content != nil
        let offset: Int64
        if case .download(let target) = context.responseBody.storage { offset = target.resumeOffset ?? 0 } else { offset = 0 }
        let monitor = self.monitor
        let observer = self.observer
        let id = context.requestID
        // Subscribing makes the engine report progress for this client's transfers.
        let events = context.events.broadcaster?.subscribe(bufferingNewest: 16)
        let watcher = Task {
            guard let events else { return }
            for await event in events where event.requestID == id {
                guard event.kind == .progress, let progress = event.progress else { continue }
                monitor.offer(Self.update(progress, upload: upload, offset: offset), notifying: observer)
            }
        }
        defer { watcher.cancel() }
        do {
            let raw = try await next(request, context)
            monitor.finish(with: Self.final(raw, request: request, upload: upload), notifying: observer)
            return raw
        } catch {
            monitor.finish(with: nil, notifying: observer)
            throw error
        }
    }

    /// A progress event as the monitor's value.
    static func update(_ progress: TransferProgress, upload: Bool, offset: Int64) -> TransferProgressUpdate {
        if upload {
            return TransferProgressUpdate(direction: .upload, bytesDone: progress.bytesSent, bytesExpected: progress.totalBytesToSend)
        }
        return TransferProgressUpdate(
            direction: .download, bytesDone: offset + progress.bytesReceived,
            bytesExpected: progress.totalBytesToReceive.map { $0 + offset })
    }

    /// The last value: the whole request body, or the whole response body (`nil` for a stream).
    static func final(_ raw: RawResponse, request: PreparedRequest, upload: Bool) -> TransferProgressUpdate? {
        if upload, let length = request.content?.length {
            return TransferProgressUpdate(direction: .upload, bytesDone: length, bytesExpected: length)
        }
        let length: Int64
        switch raw.content {
        case .data(let data): length = Int64(data.count)
        case .file(_, let fileLength): length = fileLength
        case .stream: return nil  // the call ends at the head; the body is still coming
        }
        return TransferProgressUpdate(direction: .download, bytesDone: length, bytesExpected: length)
    }
}

extension RequestOptions {
    /// Reports this call's progress to `monitor` (an `AsyncSequence` of
    /// ``TransferProgressUpdate``), ending it when the call ends.
    ///
    /// ```swift
    /// try await client.send(UploadPhoto(file: path)) { $0.reportProgress(to: progress) }
    /// ```
    public mutating func reportProgress(to monitor: TransferProgressMonitor) {
        middleware.append(ProgressMiddleware(monitor: monitor))
    }
}
