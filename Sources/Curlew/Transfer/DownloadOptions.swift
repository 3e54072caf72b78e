/// How ``APIClient/download(_:to:options:adjust:)`` treats the destination and the answer.
public struct DownloadOptions: Sendable {
    /// Replace a file already at the destination. Default: `false` — a file URL that exists fails
    /// with `.destinationExists` before anything is sent; in a directory, a taken name gets a
    /// ` (1)`, ` (2)`… suffix before its extension.
    public var replacesExisting: Bool = false
    /// Keep the partial file of a failed or cancelled download beside the destination
    /// (a hidden `.curlew-….curlew-partial` file, with a `.curlew-resume` record) and continue it next time
    /// with `Range` and `If-Range`, also after the process restarts. Default: `false` — a failed
    /// or cancelled download leaves nothing behind.
    public var resumable: Bool = false
    /// Media types (lower case, no parameters) that mean the server answered something else
    /// than the file — an error in JSON: the call fails with
    /// `.unexpectedContentType`, the body in ``/CurlewCore/CurlewError/responseBody``, nothing on disk.
    /// Default: `application/json`, `application/problem+json`.
    public var refusedContentTypes: Set<String> = ["application/json", "application/problem+json"]
    /// Where a download without a destination goes. Default: ``DownloadArea/shared``.
    public var area: DownloadArea = .shared
    /// The stall detector's window: the download fails with `.idleTimeout` when fewer than
    /// ``minimumSpeed`` bytes a second arrived, on average, over this long (libcurl's
    /// `CURLOPT_LOW_SPEED_TIME`, whole seconds, at least 1), and also when no byte at all moved
    /// for this long, the head included (it replaces ``/CurlewCore/TransferOptions/idleTimeout`` for the
    /// call). `nil` turns both off. Default: 30 seconds.
    ///
    /// A download has no total timeout unless the call sets one
    /// (`client.download(r, to: url) { $0.totalTimeout = .seconds(600) }`):
    /// ``/CurlewCore/TransferOptions/totalTimeout`` is meant for ordinary requests and does not apply; the
    /// connect timeout does.
    public var stallTimeout: Duration? = .seconds(30)
    /// Bytes a second below which, sustained over ``stallTimeout``, a download counts as stalled
    /// (libcurl's `CURLOPT_LOW_SPEED_LIMIT`). Default: 1024 (1 KiB/s). A speed below 1, or a
    /// ``stallTimeout`` of zero or less, is refused: the download fails unsent with
    /// ``/CurlewCore/CurlewError/Code/invalidConnectionSettings``.
    public var minimumSpeed: Int = 1024
    /// The largest file the download may write, in bytes of the file (decoded, so a small
    /// compressed answer that inflates past it stops too): a larger announced length fails at
    /// the head, a body that grows past it fails when it does, both with
    /// ``/CurlewCore/CurlewError/Code/bodyTooLarge``, and nothing is left on disk (a resumable
    /// partial file included). ``/CurlewCore/TransferOptions/maximumBodySize`` protects memory
    /// and does not apply to files. Default: `nil`, no limit; a negative value is refused
    /// unsent with ``/CurlewCore/CurlewError/Code/invalidConnectionSettings``.
    public var maximumFileSize: Int64? = nil

    /// Creates options with the defaults documented on each property.
    public init(replacesExisting: Bool = false, resumable: Bool = false) {
        self.replacesExisting = replacesExisting
        self.resumable = resumable
    }
}
