public import Foundation

/// A response body read while it arrives, as an async sequence of `Data` chunks.
///
/// The transport stops receiving (`CURL_WRITEFUNC_PAUSE`) while the unread chunks exceed the
/// high-water mark and resumes when the reader has caught up, so a body of any size is read in
/// constant memory. The sequence throws the transfer's error if it fails midway; cancelling the
/// reading task, or dropping every copy of the stream, cancels the transfer.
///
/// ```swift
/// let response = try await client.stream(LogsRequest())
/// for try await chunk in response.value {
///     try handle.write(contentsOf: chunk)
/// }
/// ```
public struct ResponseBodyStream: AsyncSequence, Sendable {
    /// A chunk of body bytes.
    public typealias Element = Data
    /// Any error of the transfer, usually ``CurlewError``.
    public typealias Failure = any Error

    package let buffer: ResponseBodyBuffer
    /// Cancels the transfer when the last copy of the stream is gone without reaching the end.
    private let lifetime: ConsumerLifetime

    package init(buffer: ResponseBodyBuffer) {
        self.buffer = buffer
        self.lifetime = ConsumerLifetime(buffer: buffer)
    }

    /// Creates an iterator; read the stream once.
    public func makeAsyncIterator() -> Iterator {
        Iterator(buffer: buffer, lifetime: lifetime)
    }

    /// Reads the chunks one by one.
    public struct Iterator: AsyncIteratorProtocol {
        package let buffer: ResponseBodyBuffer
        package let lifetime: ConsumerLifetime

        /// The next chunk, or `nil` at the end of the body.
        public mutating func next() async throws -> Data? {
            try await buffer.next()
        }
    }

    /// Reads the rest of the body into memory.
    /// - Parameter limit: Fails with `.bodyTooLarge` beyond this many bytes.
    public func collect(upTo limit: Int) async throws -> Data {
        var data = Data()
        for try await chunk in self {
            guard data.count + chunk.count <= limit else {
                buffer.cancel()
                throw CurlewError(code: .bodyTooLarge, message: "response body exceeds the maximum of \(limit) bytes")
            }
            data.append(chunk)
        }
        return data
    }

    /// Stops the transfer; a reader waiting for the next chunk gets `CancellationError`.
    public func cancel() { buffer.cancel() }
}

/// Owned by every copy of a ``ResponseBodyStream``; when the last copy goes, the transfer stops
/// unless the body was read to its end.
package final class ConsumerLifetime: Sendable {
    package let buffer: ResponseBodyBuffer
    package init(buffer: ResponseBodyBuffer) { self.buffer = buffer }
    deinit { buffer.consumerGone() }
}

extension ResponseBodyStream {
    /// A stream of one chunk that is already complete (a mock's or a cache's answer).
    public init(data: Data) {
        let buffer = ResponseBodyBuffer(highWaterMark: Swift.max(1, data.count + 1), onResume: {}, onCancel: {})
        if !data.isEmpty { _ = data.withUnsafeBytes { buffer.offer($0) } }
        buffer.finish(Optional<any Error>.none)
        self.init(buffer: buffer)
    }

    /// A stream that fails at once with `error`.
    package init(error: any Error) {
        let buffer = ResponseBodyBuffer(highWaterMark: 1, onResume: {}, onCancel: {})
        buffer.finish(error)
        self.init(buffer: buffer)
    }
}
