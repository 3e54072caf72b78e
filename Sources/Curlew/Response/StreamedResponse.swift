public import HTTPTypes

/// A response whose body is read while it arrives (``APIClient/stream(_:highWaterMark:options:)``).
public struct StreamedResponse: Sendable {
    /// The response status.
    public var status: HTTPResponse.Status
    /// The response headers.
    public var headers: HTTPFields
    /// The URL that produced the response (after redirects).
    public var url: String
    /// Where the response came from.
    public var source: ResponseSource
    /// The body, as chunks.
    public var body: ResponseBodyStream

    /// Wraps a raw response; a collected body becomes a stream of one chunk.
    public init(_ raw: RawResponse) {
        status = raw.status
        headers = raw.headers
        url = raw.url
        source = raw.source
        switch raw.content {
        case .stream(let stream): body = stream
        case .data(let data): body = ResponseBodyStream(data: data)
        case .file(let path, _): body = ResponseBodyStream(error: CurlewError(code: .transportFailure, message: "the body was written to \(path), not streamed"))
        }
    }
}
