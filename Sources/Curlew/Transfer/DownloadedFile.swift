public import Foundation
public import HTTPTypes

/// A completed download (``APIClient/download(_:to:options:adjust:)``): where the file is and
/// what the server said about it.
public struct DownloadedFile: Sendable {
    /// The file, at its final place.
    public var url: URL
    /// The media type from `Content-Type`, lower case without parameters (`image/png`), or `nil`.
    public var mimeType: String?
    /// The file's length in bytes.
    public var length: Int64
    /// The file name the server suggested in `Content-Disposition`, sanitised (no `/`, `\`, `..`,
    /// leading dots, NUL or control characters; at most 200 UTF-8 bytes), `filename*` decoded
    /// first; `nil` when there was none or nothing safe was left.
    public var suggestedFileName: String?
    /// The status of the answer that completed the file (`200`, `206`; `416` when a resumed
    /// download turned out to be complete already).
    public var status: HTTPResponse.Status
    /// The answer's headers.
    public var headers: HTTPFields
    /// Bytes that were already on disk from an earlier attempt (a resumed download), else 0.
    public var resumedBytes: Int64
    /// What the transport measured about the exchange that completed the file (for a resumed
    /// download, the last exchange only: ``/CurlewCore/TransferMetrics/bytesReceived`` counts the bytes that
    /// arrived then, not ``resumedBytes``); `nil` when the transport measures nothing.
    public var metrics: TransferMetrics?

    /// The file's path.
    public var path: String { url.path }

    /// Creates a value.
    public init(
        url: URL, mimeType: String?, length: Int64, suggestedFileName: String?, status: HTTPResponse.Status,
        headers: HTTPFields, resumedBytes: Int64 = 0, metrics: TransferMetrics? = nil
    ) {
        self.url = url
        self.mimeType = mimeType
        self.length = length
        self.suggestedFileName = suggestedFileName
        self.status = status
        self.headers = headers
        self.resumedBytes = resumedBytes
        self.metrics = metrics
    }

    /// The media type of a `Content-Type` value: lower case, without parameters; empty for none.
    static func mediaType(of contentType: String?) -> String {
        guard let contentType else { return "" }
        let type = contentType.split(separator: ";", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
        return type.trimmingASCIISpaces.lowercased()
    }
}
