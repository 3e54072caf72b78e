public import Foundation
internal import HTTPTypes

extension APIClient {
    /// Downloads a response body to disk in constant memory and returns where it landed.
    ///
    /// ```swift
    /// let file = try await client.download(ExportRequest(), to: URL(fileURLWithPath: "/srv/exports/"))
    /// print(file.path, file.length, file.mimeType ?? "-", file.suggestedFileName ?? "-")
    /// ```
    ///
    /// The body goes to a partial file beside the destination (mode 0600, created with
    /// `O_EXCL|O_NOFOLLOW`) and is moved into place only when it is complete and its status
    /// accepted (``Endpoint/accepts(_:)``); an existing file is not overwritten unless
    /// ``DownloadOptions/replacesExisting``. An error status or a refused content type (JSON
    /// instead of the file) fails the call with the body in ``/CurlewCore/CurlewError/responseBody`` and
    /// nothing on disk. The request goes through queues, middleware and retry like any other.
    ///
    /// With ``DownloadOptions/resumable`` a failed or cancelled download keeps its partial file and
    /// the next call continues it with `Range` and `If-Range`: a `206` is appended (bytes before
    /// the offset that the file already holds are dropped), a `200` (the file changed) starts
    /// over, a `416` whose `Content-Range` names the partial file's size completes it, any other
    /// `416` starts over; a `206` or `416` whose `ETag` (or `Last-Modified`, when that is the
    /// validator) names another version starts over, and so does a `206` that cannot continue
    /// the file (its range starts after the offset); a `206` whose range ends before the
    /// resource does (a server that sends large files in parts) is followed by a request for the
    /// rest; the final length is checked. A resumable
    /// download locks its partial file (`flock`): a second one of the same URL to the same
    /// destination, in this process or another, fails with `.downloadInProgress` at once.
    ///
    /// Timeouts: the connect timeout applies; ``/CurlewCore/TransferOptions/totalTimeout`` does not — a
    /// download has no total timeout unless the call sets one (`$0.totalTimeout = .seconds(600)`).
    /// Instead a stall detector fails it with `.idleTimeout` when less than
    /// ``DownloadOptions/minimumSpeed`` arrives over ``DownloadOptions/stallTimeout``.
    ///
    /// - Parameters:
    ///   - request: The endpoint to download.
    ///   - destination: A file URL (the file to create), a folder (an existing directory, or a URL
    ///     ending in `/`: the name comes from `Content-Disposition`, else the URL), or `nil` for
    ///     the managed ``DownloadArea``.
    ///   - download: Overwriting, resuming, refused content types, the area (the `options:` label).
    ///   - adjust: Changes a copy of ``Endpoint/options`` for this call (queue, timeout,
    ///     ``RequestOptions/reportProgress(to:)``).
    /// - Throws: ``/CurlewCore/CurlewError`` (`.destinationExists`, `.downloadInProgress`, `.fileNotWritable`,
    ///   `.unacceptableStatus`, `.unexpectedContentType`, `.rangeMismatch`, `.downloadIncomplete`,
    ///   `.idleTimeout` for a stall, `.totalTimeout` when the call set one, transport errors);
    ///   `CancellationError` when cancelled.
    public nonisolated func download<R: Endpoint>(
        _ request: R, to destination: URL? = nil, options download: DownloadOptions = DownloadOptions(),
        adjust: ((inout RequestOptions) -> Void)? = nil
    ) async throws -> DownloadedFile {
        var options = request.options
        adjust?(&options)
        // The tracker's ticket belongs to the whole download, not to one exchange: a restart
        // (after a 416 or a changed file) must not count as the end, so it is finished here,
        // once the file is in place or the download has failed.
        let ticket = options.ticket
        options.ticket = nil
        defer { ticket?.finish() }
        // Monitors outlive an exchange that starts over (they end with the file); whatever way
        // the download ends, none is left waiting (a no-op for one that already ended).
        let monitors = options.middleware.compactMap { ($0 as? ProgressMiddleware)?.monitor }
        defer { for monitor in monitors { monitor.finish(with: nil) } }
        // Prepared once: the plan (the partial file's name) and every exchange use the same URL.
        var prepared: PreparedRequest
        do {
            prepared = try prepare(request, baseURL: options.baseURL)
        } catch {
            throw Self.surface(error, request: nil)
        }
        // A download takes as long as it takes: no total timeout unless the call sets one (`call`
        // applies `options.totalTimeout`); a stall detector instead of the idle timeout.
        prepared.options.totalTimeout = nil
        prepared.options.idleTimeout = download.stallTimeout
        let url = prepared.url
        let plan: DownloadPlan
        var lock: PartialFileLock? = nil
        do {
            plan = try DownloadPlan(destination: destination, url: url, options: download)
            // Two resumable downloads into one partial file would interleave: the second fails.
            if let lockPath = plan.lockPath { lock = try PartialFileLock.acquire(at: lockPath) }
        } catch {
            // Checking the destination is part of preparing the download: nothing was sent.
            var error = error
            if error.stage == nil { error.stage = .prepare }
            throw Self.surface(error, request: prepared.summary)
        }
        defer { lock?.release() }
        // The area never sweeps this call's partial file, record or lock while it runs.
        let busy = [plan.partialPath, plan.recordPath, plan.lockPath].compactMap { $0 }
        if let area = plan.area {
            for path in busy { area.retain(path) }
            area.sweep()
        }
        defer { for path in busy { plan.area?.release(path) } }
        let accessories = options.usesAccessories && !AccessoryScope.insideGroup ? configuration.accessories + options.accessories : []
        guard !accessories.isEmpty else {
            return try await exchanges(request, prepared: prepared, plan: plan, options: options, download: download)
        }
        // Accessories see one activity for the whole download, not one per exchange: a download
        // that starts over is neither a failure nor a second download to them, and the progress
        // they draw goes on through the restart (one monitor for every exchange).
        let activity = Activity(kind: .request, name: options.requestName ?? EndpointTypeFacts.of(request).name, request: prepared.summary)
        let target = DownloadTarget(
            path: plan.partialPath, resumeOffset: nil, resumable: download.resumable, recordPath: nil, url: url, storedValidator: nil,
            refusedContentTypes: [], stallSeconds: nil)
        var drawn = AccessoryProgress.options(options, drawingTo: accessories, activity: activity, request: prepared, responseBody: .download(target))
        drawn.usesAccessories = false
        let drawnMonitors = drawn.middleware.compactMap { ($0 as? ProgressMiddleware)?.monitor }
        defer { for monitor in drawnMonitors { monitor.finish(with: nil) } }
        return try await AccessoryScope.run(activity, accessories: accessories) {
            try await exchanges(request, prepared: prepared, plan: plan, options: drawn, download: download)
        }
    }

    /// The exchanges of one download, until the file is in place: a resumed one first when a
    /// partial file can be continued, requests for the rest while the server answers with parts
    /// of the file, and at most one start from byte 0 when the file changed.
    private nonisolated func exchanges<R: Endpoint>(
        _ request: R, prepared: PreparedRequest, plan: DownloadPlan, options: RequestOptions, download: DownloadOptions
    ) async throws -> DownloadedFile {
        let url = prepared.url
        var restarted = false
        // Set once an answer ended before the resource does: the next exchange asks for the rest.
        var continuing = false
        // What an earlier call left on disk that this one kept (`DownloadedFile.resumedBytes`).
        var resumedBytes: Int64?
        while true {
            let resume = download.resumable ? Self.resumePoint(plan, url: url) : nil
            if resumedBytes == nil { resumedBytes = resume?.offset ?? 0 }
            do {
                var attempt = options
                // A resumed exchange may start the download over once (see the catch below).
                attempt.mayStartOver = resume != nil && !restarted
                let outcome = try await downloadOnce(
                    request, prepared: prepared, plan: plan, resume: resume, resumedBytes: resumedBytes ?? 0, continuing: continuing,
                    options: attempt, download: download)
                switch outcome {
                case .file(let file):
                    return file
                case .partOfTheFile:
                    continuing = true
                    continue
                case .startOver:
                    break
                }
            } catch let error as CurlewError {
                if !download.resumable { plan.discardPartial() }
                guard resume != nil, !restarted, error.startsDownloadOver else { throw error }
            } catch {
                if !download.resumable { plan.discardPartial() }
                throw error
            }
            // The file changed on the server, or the partial file does not match it: start over.
            plan.discardPartial()
            restarted = true
            continuing = false
            resumedBytes = 0
        }
    }

    /// What one exchange of a download ends with.
    private enum DownloadAttempt: Sendable {
        /// The file, in place.
        case file(DownloadedFile)
        /// A `206` that ended before the resource does, appended to the partial file: the rest
        /// comes in the next exchange.
        case partOfTheFile
        /// A `416` to the first range request that does not complete the partial file: the
        /// download starts over from byte 0.
        case startOver
    }

    /// One exchange into the partial file.
    private nonisolated func downloadOnce<R: Endpoint>(
        _ request: R, prepared: PreparedRequest, plan: DownloadPlan, resume: (offset: Int64, record: ResumeRecord)?,
        resumedBytes: Int64, continuing: Bool, options: RequestOptions, download: DownloadOptions
    ) async throws -> DownloadAttempt {
        var options = options
        if let resume { options.middleware.append(RangeRequestMiddleware(offset: resume.offset, validator: resume.record.validator)) }
        let target = DownloadTarget(
            path: plan.partialPath, resumeOffset: resume?.offset, resumable: download.resumable, recordPath: plan.recordPath,
            url: prepared.url, storedValidator: resume?.record.validator, refusedContentTypes: download.refusedContentTypes.sorted(),
            stallSeconds: download.stallTimeout.map(Self.wholeSeconds), minimumSpeed: download.minimumSpeed,
            maximumFileSize: download.maximumFileSize, storedCompleteLength: resume?.record.completeLength)
        // Every outcome is decided here, inside the call, so a failure is the call's: reported as
        // `.failed` and handed to `Endpoint.didFail`.
        let mayStartOver = options.mayStartOver
        return try await call(request, prepared: prepared, options: options, responseBody: .download(target)) { raw, summary in
            if raw.status == .rangeNotSatisfiable {
                // Only a resumed exchange asks for a range, so only it hears 416.
                guard let resume else { throw ResponseStatus.error(raw, summary: summary) }
                if Self.completesPartial(raw, offset: resume.offset, record: resume.record) {
                    return .file(try Self.completeFromPartial(plan, record: resume.record, answer: raw, download: download, resumedBytes: resumedBytes))
                }
                if continuing {
                    // The server announced more bytes than it now has: its answers contradict
                    // each other, and the file cannot be trusted.
                    plan.discardPartial()
                    let announced = resume.record.completeLength.map(String.init) ?? "more"
                    throw CurlewError(
                        code: .downloadIncomplete, message: "the download has \(resume.offset) bytes, the server announced \(announced)",
                        request: summary, status: raw.status)
                }
                guard mayStartOver else { throw ResponseStatus.error(raw, summary: summary) }
                return .startOver
            }
            if download.resumable, Self.endsBeforeTheResource(raw) {
                // The rest is asked for with the part's validator: without one, it could come
                // from another version of the file.
                guard let record = plan.recordPath.flatMap { ResumeRecord.read(at: $0) }, !record.validator.isEmpty else {
                    plan.discardPartial()
                    throw CurlewError(
                        code: .downloadIncomplete,
                        message: "the server sent part of the file (\(raw.headers[.contentRange] ?? "")) without an ETag or Last-Modified to ask for the rest with",
                        request: summary, status: raw.status)
                }
                return .partOfTheFile
            }
            return .file(try Self.finishDownload(raw, summary: summary, plan: plan, download: download, resumedBytes: resumedBytes))
        }
    }

    /// Checks the finished answer and moves the file into place.
    private static func finishDownload(
        _ raw: RawResponse, summary: RequestSummary, plan: DownloadPlan, download: DownloadOptions, resumedBytes: Int64
    ) throws(CurlewError) -> DownloadedFile {
        guard case .file(_, let length) = raw.content else {
            var error = CurlewError(
                code: .unexpectedContentType,
                message: "the server answered \(raw.headers[.contentType] ?? "no content type") instead of a file"
            )
            .completed(request: summary, response: raw)
            error.responseBody = raw.body
            error.stage = .status
            throw error
        }
        var expected: Int64?
        // Whether the body ended before the last byte its range names (a connection cut short).
        var cutShort = false
        if raw.status.code == 206 {
            // The file ends where the range ends, which must be the whole resource: a range
            // whose total is `*` still names its last byte.
            let range = raw.headers[.contentRange].flatMap(ContentRange.init)
            let rangeEnd = range?.last.map { $0 + 1 }
            expected = range?.complete ?? rangeEnd
            cutShort = rangeEnd.map { length < $0 } ?? false
        } else if raw.headers[.contentEncoding] == nil {
            expected = raw.headers[.contentLength].flatMap { Int64($0) }
        }
        if let expected, expected != length {
            // A resumable download cut short keeps what arrived: the next attempt resumes there.
            // Bytes that contradict the server's lengths are not kept.
            if !(download.resumable && cutShort) { plan.discardPartial() }
            throw CurlewError(
                code: .downloadIncomplete, message: "the download has \(length) bytes, the server announced \(expected)",
                request: summary, status: raw.status)
        }
        // A range answer may leave out what the answer that began the file said (its name, its
        // type): the resume record kept them.
        let record = raw.status.code == 206 ? plan.recordPath.flatMap { ResumeRecord.read(at: $0) } : nil
        let disposition = raw.headers[.contentDisposition] ?? record?.contentDisposition
        let suggested = ContentDisposition.suggestedFileName(disposition)
        let name = plan.fixedName ?? suggested ?? Self.fileName(fromURL: raw.url)
        let path = try plan.place(named: name, replacing: download.replacesExisting)
        if let recordPath = plan.recordPath { unlink(recordPath) }
        let mediaType = DownloadedFile.mediaType(of: raw.headers[.contentType] ?? record?.contentType)
        return DownloadedFile(
            url: URL(fileURLWithPath: path), mimeType: mediaType.isEmpty ? nil : mediaType, length: length,
            suggestedFileName: suggested, status: raw.status, headers: raw.headers,
            resumedBytes: raw.status.code == 206 ? resumedBytes : 0, metrics: raw.metrics)
    }

    /// Whether a `206` delivered the whole of its range, but the range ends before the resource
    /// does (`bytes 0-999/5000`): a server that sends large files in parts, whose next part a
    /// range request from the file's new end asks for.
    static func endsBeforeTheResource(_ raw: RawResponse) -> Bool {
        guard raw.status.code == 206, case .file(_, let length) = raw.content,
            let range = raw.headers[.contentRange].flatMap(ContentRange.init), let last = range.last, let complete = range.complete
        else { return false }
        return length == last + 1 && length < complete
    }

    /// A `416` said the partial file is the whole resource: it is moved into place as it is.
    private nonisolated static func completeFromPartial(
        _ plan: DownloadPlan, record: ResumeRecord, answer: RawResponse, download: DownloadOptions, resumedBytes: Int64
    ) throws(CurlewError) -> DownloadedFile {
        let length = plan.partialSize ?? 0
        let suggested = ContentDisposition.suggestedFileName(record.contentDisposition)
        let name = plan.fixedName ?? suggested ?? Self.fileName(fromURL: record.url)
        let path = try plan.place(named: name, replacing: download.replacesExisting)
        if let recordPath = plan.recordPath { unlink(recordPath) }
        let mediaType = DownloadedFile.mediaType(of: record.contentType)
        return DownloadedFile(
            url: URL(fileURLWithPath: path), mimeType: mediaType.isEmpty ? nil : mediaType, length: length,
            suggestedFileName: suggested, status: answer.status, headers: answer.headers,
            resumedBytes: resumedBytes, metrics: answer.metrics)
    }

    /// Whether a `416` to a resumed exchange says the partial file of `offset` bytes is the whole
    /// resource: its `Content-Range` is `bytes */offset`, the length an earlier answer announced
    /// (`announced`, when it announced one) is the same, and its validators, when it has any, are
    /// the stored one (a server that ignores `If-Range` may be describing another version).
    static func completesPartial(_ raw: RawResponse, offset: Int64, validator: String, announced: Int64?) -> Bool {
        guard raw.status.code == 416, let range = raw.headers[.contentRange].flatMap(ContentRange.init),
            range.complete == offset, announced.map({ $0 == offset }) ?? true
        else { return false }
        return !ResumeRecord.contradicts(validator, etag: raw.headers[.eTag], lastModified: raw.headers[.lastModified])
    }

    /// ``completesPartial(_:offset:validator:announced:)`` for the partial file `record` describes.
    static func completesPartial(_ raw: RawResponse, offset: Int64, record: ResumeRecord) -> Bool {
        completesPartial(raw, offset: offset, validator: record.validator, announced: record.completeLength)
    }

    /// Where a resumable download continues: the partial file's size and its record, when both
    /// exist, belong to `url` and have a validator; otherwise any leftovers are removed.
    private static func resumePoint(_ plan: DownloadPlan, url: String) -> (offset: Int64, record: ResumeRecord)? {
        guard let recordPath = plan.recordPath, let record = ResumeRecord.read(at: recordPath), record.url == url,
            !record.validator.isEmpty, let size = plan.partialSize, size > 0
        else {
            plan.discardPartial()
            return nil
        }
        return (size, record)
    }

    /// A duration in whole seconds, rounded up, at least 1 (`CURLOPT_LOW_SPEED_TIME`).
    static func wholeSeconds(_ duration: Duration) -> Int {
        let (seconds, attoseconds) = duration.components
        return max(1, Int(seconds) + (attoseconds > 0 ? 1 : 0))
    }

    /// The last path component of a URL, sanitised, or `download`.
    static func fileName(fromURL url: String) -> String {
        let path = URL(string: url)?.path ?? ""
        let last = path.split(separator: "/").last.map(String.init) ?? ""
        return ContentDisposition.sanitised(last.removingPercentEncoding ?? last) ?? "download"
    }
}
