internal import Foundation
internal import HTTPTypes
#if canImport(Glibc)
    internal import Glibc
#endif

/// The body sink of a download (``DownloadTarget``). It decides what to do once the final head is
/// known (``headArrived(status:headerBlock:)``):
///
/// - a `2xx` whose media type is not refused goes to the partial file: `200` (and other 2xx)
///   from byte 0 — never appended to older bytes — and `206` appended at the resume offset. Its
///   `Content-Range` must cover that offset: bytes before it that the file already holds are
///   dropped, not written twice; a range that starts after it (a gap) or ends before it fails
///   with `.rangeMismatch`, the partial file untouched. A `206` with another `ETag` or
///   `Last-Modified` than the stored validator, or content-encoded (its range counts encoded
///   bytes), fails with `.resourceChanged`. The download starts over once after either;
/// - anything else (an error status, JSON instead of a file) is collected in memory, up to
///   ``DownloadTarget/errorBodyLimit`` bytes, for the error; a new partial file is removed (also
///   a resumable one: nothing in it to resume), a resumed one is left as it was.
///
/// A failed or cancelled transfer removes a new partial file and keeps a resumable one. Engine
/// thread only after submission, like every sink.
final class DownloadBodySink: ResponseBodySink {
    private enum Mode {
        case undecided
        case file
        case memory(Data)
        case closed
    }

    private let target: DownloadTarget
    private let request: RequestSummary
    private var descriptor: Int32
    private var mode = Mode.undecided
    /// Whether this sink created the file (a non-resumable one is removed on failure).
    private var settled = false
    /// Whether a 2xx head started the file (and wrote its resume record).
    private var startedFile = false
    /// The file's length so far: where the answer started plus the bytes written since.
    private var fileLength: Int64 = 0
    /// How many of the answer's first bytes the partial file already holds (a `206` that starts
    /// before the resume offset): dropped as they arrive.
    private var overlap: Int64 = 0

    private init(target: DownloadTarget, descriptor: Int32, request: RequestSummary) {
        self.target = target
        self.descriptor = descriptor
        self.request = request
    }

    /// Opens the partial file: a new one with `O_EXCL|O_NOFOLLOW` (mode 0600), or, to resume,
    /// the existing regular file (never through a symbolic link).
    /// - Throws: `.fileNotWritable` when it cannot be created or opened.
    static func open(_ target: DownloadTarget, request: RequestSummary) throws(CurlewError) -> DownloadBodySink {
        let flags =
            target.resumeOffset == nil
            ? O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
            : O_WRONLY | O_NOFOLLOW | O_CLOEXEC
        let descriptor = Glibc.open(target.path, flags, 0o600)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw CurlewError(code: .fileNotWritable, message: "could not open \(target.path): \(reason)", request: request)
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw CurlewError(code: .fileNotWritable, message: "\(target.path) is not a regular file", request: request)
        }
        target.verdict.decide(.undecided)
        return DownloadBodySink(target: target, descriptor: descriptor, request: request)
    }

    deinit {
        // A transfer dropped without an outcome removes a new partial file, keeps a resumable one.
        releaseFile()
    }

    var wantsHead: Bool { true }

    func headArrived(status: Int, headerBlock: [UInt8]) {
        guard case .undecided = mode else { return }
        let fields = ResponseHeadParser.fields(of: headerBlock)
        let mediaType = DownloadedFile.mediaType(of: fields[.contentType])
        guard (200..<300).contains(status), !target.refusedContentTypes.contains(mediaType) else {
            mode = .memory(Data())
            target.verdict.decide(.continues(0))
            releaseFile()
            return
        }
        // Where the answer's bytes go in the file, and where they start in the resource (they
        // differ by the overlap of a range that starts before the resume offset).
        var start: Int64 = 0
        var first: Int64 = 0
        // An encoded answer's Content-Length counts encoded bytes; the file holds decoded ones.
        var complete = fields[.contentEncoding] == nil ? fields[.contentLength].flatMap { Int64($0) } : nil
        var validator = ResumeRecord.validator(etag: fields[.eTag], lastModified: fields[.lastModified])
        if status == 206 {
            let offset = target.resumeOffset ?? 0
            guard let range = fields[.contentRange].flatMap(ContentRange.init), let rangeFirst = range.first,
                let rangeLast = range.last, rangeFirst <= offset, rangeLast >= offset
            else {
                abortWith(.rangeMismatch, "the 206 answer's Content-Range \"\(fields[.contentRange] ?? "")\" does not continue at byte \(offset)")
                return
            }
            if let stored = target.storedValidator,
                ResumeRecord.contradicts(stored, etag: fields[.eTag], lastModified: fields[.lastModified])
            {
                let now = ResumeRecord.isDate(stored) ? "Last-Modified \(fields[.lastModified] ?? "")" : "ETag \(fields[.eTag] ?? "")"
                abortWith(.resourceChanged, "the resource changed (\(now), was \(stored))")
                return
            }
            if let coding = fields[.contentEncoding], coding.lowercased() != "identity" {
                // Asked for unencoded bytes, the server ranged its encoded form: those offsets
                // are not the file's, so the download starts over.
                abortWith(.resourceChanged, "the 206 answer is \(coding)-encoded: its range counts encoded bytes, not the file's")
                return
            }
            start = offset
            first = rangeFirst
            overlap = offset - rangeFirst
            complete = range.complete
            // A range without validators continues the version the stored one names.
            if validator.isEmpty { validator = target.storedValidator ?? "" }
        }
        if let limit = target.maximumFileSize, let complete, complete > limit {
            abortWith(.bodyTooLarge, "the file is \(complete) bytes, more than maximumFileSize (\(limit))", discarding: true)
            return
        }
        // Truncate only a file of another size. ext4 (auto_da_alloc) treats any truncation to 0 —
        // even of the empty file just created — as "about to replace the contents" and starts
        // writeback of the whole file at close(): 60–90 ms for 64 MiB, most of a download's time
        // (BENCHMARKS.md, "Files in and out").
        var info = stat()
        guard fstat(descriptor, &info) == 0 else {
            abortWith(.fileNotWritable, "could not prepare \(target.path): \(String(cString: strerror(errno)))")
            return
        }
        let truncated = Int64(info.st_size) == start || ftruncate(descriptor, off_t(start)) == 0
        guard truncated, lseek(descriptor, off_t(start), SEEK_SET) == off_t(start) else {
            abortWith(.fileNotWritable, "could not prepare \(target.path): \(String(cString: strerror(errno)))")
            return
        }
        mode = .file
        startedFile = true
        fileLength = start
        // Progress counts the resource's bytes: those before the answer's first one, then the answer's.
        target.verdict.decide(.continues(first))
        if let recordPath = target.recordPath {
            // A range answer that leaves out the file's type or name keeps the ones the answer
            // that began the file gave.
            let previous = status == 206 ? ResumeRecord.read(at: recordPath) : nil
            ResumeRecord(
                url: target.url, validator: validator, completeLength: complete,
                contentType: fields[.contentType] ?? previous?.contentType ?? "",
                contentDisposition: fields[.contentDisposition] ?? previous?.contentDisposition ?? ""
            ).write(to: recordPath)
        }
    }

    /// An abort decided at the head, reported by the first ``receive(_:)`` or by ``finish()``.
    private var pendingAbort: (CurlewError.Code, String)?

    /// `discarding` removes the partial file and its record even when resumable: there is
    /// nothing worth resuming in a file the download may not finish.
    private func abortWith(_ code: CurlewError.Code, _ message: String, discarding: Bool = false) {
        pendingAbort = (code, message)
        target.verdict.decide(.refused)
        mode = .memory(Data())
        if discarding { discardFile() } else { releaseFile() }
    }

    /// Closes the descriptor and removes the partial file and its resume record.
    private func discardFile() {
        if descriptor >= 0 {
            close(descriptor)
            descriptor = -1
        }
        settled = true
        unlink(target.path)
        if let recordPath = target.recordPath { unlink(recordPath) }
    }

    func expect(contentLength: Int?) {}

    func receive(_ bytes: UnsafeRawBufferPointer) -> SinkDecision {
        if let pendingAbort { return .abort(pendingAbort.0, pendingAbort.1) }
        switch mode {
        case .file:
            var bytes = bytes
            if overlap > 0 {
                let dropped = Int(min(overlap, Int64(bytes.count)))
                overlap -= Int64(dropped)
                bytes = UnsafeRawBufferPointer(rebasing: bytes.dropFirst(dropped))
                if bytes.isEmpty { return .proceed }
            }
            fileLength += Int64(bytes.count)
            if let limit = target.maximumFileSize, fileLength > limit {
                let message = "the file grew past maximumFileSize (\(limit) bytes)"
                abortWith(.bodyTooLarge, message, discarding: true)
                return .abort(.bodyTooLarge, message)
            }
            if let failure = FileBodySink.writeAll(bytes, to: descriptor) {
                return .abort(.fileNotWritable, "could not write \(target.path): \(failure)")
            }
            return .proceed
        case .memory(var data):
            let room = target.errorBodyLimit - data.count
            if room > 0 {
                mode = .closed
                data.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes.prefix(room)))
                mode = .memory(data)
            }
            return .proceed
        case .undecided, .closed:
            return .proceed
        }
    }

    var acceptsMore: Bool { true }

    func finish() -> CurlewError? {
        if let pendingAbort { return CurlewError(code: pendingAbort.0, message: pendingAbort.1, request: request) }
        guard case .file = mode else { return nil }
        let result = close(descriptor)
        descriptor = -1
        guard result == 0 else {
            let reason = String(cString: strerror(errno))
            fail(CurlewError(code: .fileNotWritable, message: reason))
            return CurlewError(code: .fileNotWritable, message: "could not write \(target.path): \(reason)", request: request)
        }
        settled = true
        return nil
    }

    func content() -> ResponseContent {
        switch mode {
        case .memory(let data):
            return .data(data)
        case .file, .undecided, .closed:
            var info = stat()
            let length = stat(target.path, &info) == 0 ? Int64(info.st_size) : 0
            return .file(path: target.path, length: length)
        }
    }

    func fail(_ error: CurlewError) {
        if case .file = mode { mode = .closed }
        if case .undecided = mode { mode = .closed }
        releaseFile()
    }

    /// Closes the descriptor; removes the file unless the download is resumable and it holds
    /// something to resume: a resumable file this sink created and no answer started stays only
    /// once a 2xx head began it (an error answer or a failed connection leaves nothing, and a
    /// retry of the exchange can create it again).
    private func releaseFile() {
        if descriptor >= 0 {
            close(descriptor)
            descriptor = -1
        }
        guard !settled else { return }
        settled = true
        if !target.resumable || (target.resumeOffset == nil && !startedFile) { unlink(target.path) }
    }
}
