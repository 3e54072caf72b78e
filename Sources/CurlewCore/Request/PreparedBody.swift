public import Foundation

/// The body a `Transport` sends: bytes in memory, a file, or an async stream of chunks.
///
/// The `APIClient` turns an endpoint's `RequestPayload` into one when it prepares the request.
/// Whether a body can be sent twice (``isReplayable``) decides whether retry and token refresh may
/// resend the request: a one-shot stream is never resent.
public enum PreparedBody: Sendable {
    /// Bytes in memory.
    case data(Data)
    /// The contents of a regular file, read while sending (constant memory). `length` is its size
    /// when the request was prepared (for progress and identity); the transfer sends the size the
    /// file has when it is opened, and fails with `.fileUnreadable` if it cannot be opened or
    /// changes size while it is sent (shorter, or longer when its last bytes are read).
    case file(path: String, length: Int64)
    /// Chunks produced while sending.
    case stream(RequestBodyStream)

    /// The length in bytes, when known before sending.
    public var length: Int64? {
        switch self {
        case .data(let data): Int64(data.count)
        case .file(_, let length): length
        case .stream(let stream): stream.length
        }
    }

    /// Whether the body can be produced again for a second attempt.
    public var isReplayable: Bool {
        switch self {
        case .data, .file: true
        case .stream(let stream): stream.isReplayable
        }
    }

    /// The bytes, when the body is in memory.
    public var data: Data? {
        if case .data(let data) = self { return data }
        return nil
    }

    /// The bytes a middleware may read and rewrite (common arguments, signing): ``data``, or
    /// the bytes of a one-shot stream read into memory before sending (`RequestBodyStream.once(bytes:)`),
    /// which stays one-shot.
    package var parameterBytes: Data? {
        switch self {
        case .data(let data): data
        case .stream(let stream): stream.bytes
        case .file: nil
        }
    }
}

/// A request body produced while it is sent, as an async sequence of `Data` chunks.
///
/// ```swift
/// let upload = RequestBodyStream(length: size) {          // replayable: a new sequence each time
///     FileChunks(path: path)
/// }
/// let once = RequestBodyStream.once(length: nil, chunks)  // one-shot: never retried
/// ```
///
/// With a known ``length`` the request carries `Content-Length`; without one it is sent with
/// chunked transfer encoding (HTTP/1.1). A chunk sequence that throws fails the request with
/// `.bodyStreamFailed`; one that ends early or late compared to ``length`` fails it too.
public struct RequestBodyStream: Sendable {
    /// The total length, when known.
    public let length: Int64?
    /// Whether ``makeChunks`` may be called again for another attempt.
    public let isReplayable: Bool
    /// Produces the chunks, once per attempt.
    public let makeChunks: @Sendable () -> any AsyncSequence<Data, any Error> & Sendable
    /// The whole body, when a one-shot body was read into memory before sending so that
    /// middleware can read its parameters (`once(bytes:)`).
    package let bytes: Data?

    /// A replayable stream: `makeChunks` is called once per attempt.
    public init(length: Int64?, makeChunks: @escaping @Sendable () -> any AsyncSequence<Data, any Error> & Sendable) {
        self.length = length
        self.isReplayable = true
        self.makeChunks = makeChunks
        self.bytes = nil
    }

    /// A one-shot stream over an existing sequence: the request is never resent.
    public static func once(length: Int64?, _ chunks: some AsyncSequence<Data, any Error> & Sendable) -> RequestBodyStream {
        RequestBodyStream(length: length, replayable: false) { chunks }
    }

    package init(length: Int64?, replayable: Bool, makeChunks: @escaping @Sendable () -> any AsyncSequence<Data, any Error> & Sendable) {
        self.length = length
        self.isReplayable = replayable
        self.makeChunks = makeChunks
        self.bytes = nil
    }

    /// A one-shot body whose bytes are already in memory: a body that may be read only once (an
    /// OpenAPI `.single` body) read ahead so that middleware can read and rewrite its parameters
    /// (`PreparedBody.parameterBytes`). Like any one-shot stream, it is sent at most once.
    package static func once(bytes: Data) -> RequestBodyStream {
        RequestBodyStream(bytes: bytes)
    }

    private init(bytes: Data) {
        self.length = Int64(bytes.count)
        self.isReplayable = false
        self.makeChunks = { OneChunk(bytes: bytes) }
        self.bytes = bytes
    }
}

/// A sequence of one chunk: the bytes of a one-shot body read into memory.
private struct OneChunk: AsyncSequence, Sendable {
    typealias Element = Data
    let bytes: Data

    func makeAsyncIterator() -> Iterator { Iterator(bytes: bytes) }

    struct Iterator: AsyncIteratorProtocol {
        var bytes: Data?
        mutating func next() async throws -> Data? {
            defer { bytes = nil }
            return bytes
        }
    }
}
