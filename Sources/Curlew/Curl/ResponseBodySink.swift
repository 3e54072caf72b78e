internal import Foundation

/// What a body sink tells the engine after each chunk of response bytes.
enum SinkDecision {
    /// Keep the bytes coming.
    case proceed
    /// Stop delivering until the engine receives `.unpause` for this transfer
    /// (`CURL_WRITEFUNC_PAUSE`); the chunk is delivered again on resume.
    case pause
    /// Abort the transfer with this error.
    case abort(CurlewError.Code, String)
}

/// The consumer of a transfer's response body, called on the engine thread.
///
/// ``BufferedBodySink`` collects the body in memory for ``RawResponse``. A streaming sink (a later
/// capability: downloads to disk, async byte sequences) returns `.pause` when its consumer is full
/// and asks the engine to `unpause` through the inbox; progress reporting hooks in here too.
protocol ResponseBodySink: AnyObject {
    /// Called once before the first chunk with the size announced by the server, if any.
    func expect(contentLength: Int?)
    /// Called for every chunk of decoded body bytes.
    func receive(_ bytes: UnsafeRawBufferPointer) -> SinkDecision
}

/// Collects the body into one `Data`, enforcing the maximum size in decoded bytes and reserving
/// capacity from `Content-Length` so a large body is copied once.
final class BufferedBodySink: ResponseBodySink {
    private(set) var body = Data()
    private let maximumSize: Int

    init(maximumSize: Int) {
        self.maximumSize = maximumSize
    }

    func expect(contentLength: Int?) {
        guard let contentLength, contentLength > 0 else { return }
        body.reserveCapacity(min(contentLength, maximumSize))
    }

    func receive(_ bytes: UnsafeRawBufferPointer) -> SinkDecision {
        guard body.count + bytes.count <= maximumSize else {
            return .abort(.bodyTooLarge, "response body exceeds the maximum of \(maximumSize) bytes")
        }
        body.append(contentsOf: bytes)
        return .proceed
    }
}
