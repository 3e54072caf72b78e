public import Foundation

/// The body of a ``RawResponse``: collected bytes, a file on disk, or a stream being received.
///
/// Which one a transport returns follows ``TransportContext/responseBody``: collected data by
/// default (what decoding needs), a stream for ``APIClient/stream(_:highWaterMark:options:)``, a file for
/// downloads.
public enum ResponseContent: Sendable {
    /// The whole body, in memory.
    case data(Data)
    /// The body was written to this file; `length` bytes.
    case file(path: String, length: Int64)
    /// The body arrives while it is read, with back-pressure: the transfer pauses while the
    /// reader is behind.
    case stream(ResponseBodyStream)
}

/// Where a transport puts the response body (``TransportContext/responseBody``).
public struct ResponseBodyDisposition: Sendable, Hashable {
    enum Storage: Sendable, Hashable {
        case collect
        case stream(highWaterMark: Int)
        case file(path: String)
        /// A download to disk (``DownloadTarget``): status-aware, resumable.
        case download(DownloadTarget)
    }

    let storage: Storage

    /// Collect the whole body in memory, up to ``TransferOptions/maximumBodySize``.
    public static let collect = ResponseBodyDisposition(storage: .collect)

    /// Return as soon as the head arrives and deliver the body as a ``ResponseBodyStream``; the
    /// transfer pauses (`CURL_WRITEFUNC_PAUSE`) while more than `highWaterMark` bytes are unread.
    /// ``TransferOptions/maximumBodySize`` does not apply (use
    /// ``ResponseBodyStream/collect(upTo:)``), ``TransferOptions/totalTimeout`` does — it covers
    /// the time the reader takes, so raise it (``RequestOptions/timeout``) for long streams — and
    /// the response carries no ``RawResponse/metrics`` (they are known only at the end, in
    /// ``ResponseBodyStream/metrics``).
    public static func stream(highWaterMark: Int = 1 << 20) -> ResponseBodyDisposition {
        ResponseBodyDisposition(storage: .stream(highWaterMark: max(16 * 1024, highWaterMark)))
    }

    /// Write the body to a new file at `path` (created with `O_EXCL|O_NOFOLLOW`, mode 0600).
    public static func file(path: String) -> ResponseBodyDisposition {
        ResponseBodyDisposition(storage: .file(path: path))
    }
}
