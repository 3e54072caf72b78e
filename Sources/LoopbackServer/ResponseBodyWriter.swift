/// Writes the body of a streamed ``ServerResponse`` (see ``ServerResponse/stream(status:headers:_:)``).
///
/// Each `write` sends one chunk, flushes it and returns once the bytes are handed to the socket,
/// so a slow client slows the writer down. Writes throw ``LoopbackServerError/connectionClosed``
/// once the client is gone or after the stream closure has returned.
public struct ResponseBodyWriter: Sendable {
    private let send: @Sendable ([UInt8]) async throws -> Void

    /// Creates a writer that forwards every chunk to `send`, e.g. to test a stream closure in isolation.
    public init(_ send: @escaping @Sendable ([UInt8]) async throws -> Void) {
        self.send = send
    }

    /// Sends `bytes` as one chunk and flushes it. An empty array sends nothing (but still
    /// throws if the connection is gone).
    public func write(_ bytes: [UInt8]) async throws {
        try await send(bytes)
    }

    /// Sends the UTF-8 bytes of `text` as one chunk and flushes it.
    public func write(_ text: String) async throws {
        try await send(Array(text.utf8))
    }
}
