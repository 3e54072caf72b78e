/// How ``APIClient/download(_:to:options:adjust:)`` treats the destination and the answer.
public struct DownloadOptions: Sendable {
    /// Replace a file already at the destination. Default: `false` — a file URL that exists fails
    /// with `.destinationExists` before anything is sent; in a directory, a taken name gets a
    /// ` (1)`, ` (2)`… suffix before its extension.
    public var replacesExisting: Bool = false
    /// Keep the partial file of a failed or cancelled download beside the destination
    /// (`.<name>.curlew-partial`, with a `.curlew-resume` record) and continue it next time
    /// with `Range` and `If-Range`, also after the process restarts. Default: `false` — a failed
    /// or cancelled download leaves nothing behind.
    public var resumable: Bool = false
    /// Media types (lower case, no parameters) that mean the server answered something else
    /// than the file — an error in JSON (HttpManager's `downloadFromUrl`): the call fails with
    /// `.unexpectedContentType`, the body in ``CurlewError/responseBody``, nothing on disk.
    /// Default: `application/json`, `application/problem+json`.
    public var refusedContentTypes: Set<String> = ["application/json", "application/problem+json"]
    /// Where a download without a destination goes. Default: ``DownloadArea/shared``.
    public var area: DownloadArea = .shared

    /// Creates options with the defaults documented on each property.
    public init(replacesExisting: Bool = false, resumable: Bool = false) {
        self.replacesExisting = replacesExisting
        self.resumable = resumable
    }
}
