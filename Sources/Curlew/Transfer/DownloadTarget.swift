internal import Synchronization

/// Where and how a download's body is written (``ResponseBodyDisposition/download(_:)``): the
/// partial file beside the destination, whether it resumes, and which answers stay out of it.
struct DownloadTarget: Sendable, Hashable {
    /// The partial file the body is written to (renamed into place by the client when complete).
    var path: String
    /// Bytes already in a resumable partial file that the request asks the rest of (`Range:
    /// bytes=offset-`); `nil` creates a new file with `O_EXCL|O_NOFOLLOW`, mode 0600.
    var resumeOffset: Int64?
    /// Whether a failed or cancelled transfer keeps the partial file (and its ``ResumeRecord``).
    var resumable: Bool
    /// Where the resume record (URL, validator, length, type, name) is written when the head
    /// arrives; `nil` when not resumable.
    var recordPath: String?
    /// The URL the record names.
    var url: String
    /// The validator sent in `If-Range`; a `206` carrying another `ETag` (or, when the validator
    /// is a date, another `Last-Modified`) fails with `.resourceChanged`.
    var storedValidator: String?
    /// Media types (lower case, without parameters) that are not written to the file but
    /// collected for the error, e.g. `application/json`.
    var refusedContentTypes: [String]
    /// The most bytes of a refused or error answer kept in memory for the error.
    var errorBodyLimit: Int = 1 << 20
    /// Stall detection (``DownloadOptions/stallTimeout``): fail when fewer than
    /// ``minimumSpeed`` bytes a second arrived over this many whole seconds; `nil` for none.
    var stallSeconds: Int?
    /// ``DownloadOptions/minimumSpeed``.
    var minimumSpeed: Int = 1024
    /// ``DownloadOptions/maximumFileSize``: the most bytes the file may hold.
    var maximumFileSize: Int64?
    /// The resource's length as the answer that began the partial file announced it (its
    /// ``ResumeRecord/completeLength``); `nil` for a new file or an unknown length.
    var storedCompleteLength: Int64?
    /// What the sink made of the answer's head, for the exchange's progress: shared by the copies
    /// of this target (the progress reporter reads what the transfer's sink decides).
    var verdict = DownloadHeadVerdict()
}

/// What a download's sink decided at an answer's head, for ``ProgressMiddleware``: where in the
/// resource the answer's bytes start, or that it is refused and writes nothing. Set on the
/// engine thread before the head is reported (`headReceived`), so the progress values that
/// follow are read against it; reset when a sink opens for another attempt.
final class DownloadHeadVerdict: Sendable, Hashable {
    enum Value: Equatable, Sendable {
        /// No head yet.
        case undecided
        /// The answer's first byte is the resource's byte at this offset: the start of the range
        /// of a `206` that continues the file (at or before the resume offset: the file's bytes
        /// before it count as received), 0 for one written from byte 0 (and an error answer).
        case continues(Int64)
        /// The answer was refused at its head (another version, another range, encoded): none
        /// of its bytes count.
        case refused
    }

    /// Guards the value.
    private let state = Mutex(Value.undecided)

    /// The decision so far.
    var value: Value { state.withLock { $0 } }

    /// Records the decision.
    func decide(_ value: Value) { state.withLock { $0 = value } }

    static func == (lhs: DownloadHeadVerdict, rhs: DownloadHeadVerdict) -> Bool { lhs === rhs }

    func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(self)) }
}

extension ResponseBodyDisposition {
    /// A download: 2xx bodies go to ``DownloadTarget/path`` (created, truncated or appended per
    /// the status), other answers are collected in memory for the error and never touch the disk.
    static func download(_ target: DownloadTarget) -> ResponseBodyDisposition {
        ResponseBodyDisposition(storage: .download(target))
    }
}

extension DownloadTarget: ResponseBodySinkMaker {
    /// The download's sink: its partial file opened (or created) before anything is sent.
    func makeSink(for request: RequestSummary) throws(CurlewError) -> any ResponseBodySink {
        try DownloadBodySink.open(self, request: request)
    }

    /// The stall detector, when the download has one.
    var stallLimit: (bytesPerSecond: Int, seconds: Int)? {
        stallSeconds.map { (minimumSpeed, $0) }
    }
}
