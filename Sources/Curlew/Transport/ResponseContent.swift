/// Where a transport puts the response body (``TransportContext/responseBody``).
public struct ResponseBodyDisposition: Sendable, Hashable {
    enum Storage: Sendable, Hashable {
        case collect
        case stream(highWaterMark: Int)
        case file(path: String)
        /// A download to disk (``DownloadTarget``): status-aware, resumable.
        case download(DownloadTarget)

        /// What the engine's sink is for this storage.
        var sinkKind: TransferSinkKind {
            switch self {
            case .collect: .collect
            case .stream(let highWaterMark): .stream(highWaterMark: highWaterMark)
            case .file(let path): .file(path: path)
            case .download(let target): .custom(target)
            }
        }
    }

    let storage: Storage

    /// Whether the body is written to a file (a download, ``file(path:)``): every attempt of the
    /// call writes that one file, so a second attempt running beside the first (a hedge,
    /// `CurlewResilience`'s `HedgingMiddleware`) would be a second writer of it.
    package var writesToFile: Bool {
        switch storage {
        case .file, .download: true
        case .collect, .stream: false
        }
    }

    /// Whether the body is delivered as a stream (``stream(highWaterMark:)``).
    var isStream: Bool {
        if case .stream = storage { return true }
        return false
    }

    /// Collect the whole body in memory, up to ``/CurlewCore/TransferOptions/maximumBodySize``.
    public static let collect = ResponseBodyDisposition(storage: .collect)

    /// Return as soon as the head arrives and deliver the body as a ``/CurlewCore/ResponseBodyStream``; the
    /// transfer pauses (`CURL_WRITEFUNC_PAUSE`) while more than `highWaterMark` bytes are unread
    /// (at least 16 KiB, the most libcurl hands over at once: a smaller value counts as 16 KiB).
    /// ``/CurlewCore/TransferOptions/maximumBodySize`` does not apply (use
    /// ``/CurlewCore/ResponseBodyStream/collect(upTo:)``), ``/CurlewCore/TransferOptions/totalTimeout`` does — it covers
    /// the time the reader takes, so raise it (``RequestOptions/totalTimeout``) for long streams — and
    /// the response carries no ``RawResponse/metrics`` (they are known only at the end, in
    /// ``/CurlewCore/ResponseBodyStream/metrics``).
    public static func stream(highWaterMark: Int = 1 << 20) -> ResponseBodyDisposition {
        ResponseBodyDisposition(storage: .stream(highWaterMark: max(16 * 1024, highWaterMark)))
    }

    /// Write the body to a new file at `path` (created with `O_EXCL|O_NOFOLLOW`, mode 0600).
    public static func file(path: String) -> ResponseBodyDisposition {
        ResponseBodyDisposition(storage: .file(path: path))
    }
}
