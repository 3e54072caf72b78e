package import Foundation
#if canImport(Glibc)
    internal import Glibc
#endif

/// What a body sink tells the engine after each chunk of response bytes.
package enum SinkDecision {
    /// Keep the bytes coming.
    case proceed
    /// Stop delivering until the engine receives `.unpause` for this transfer
    /// (`CURL_WRITEFUNC_PAUSE`); the chunk is delivered again on resume.
    case pause
    /// Abort the transfer with this error.
    case abort(CurlewError.Code, String)
}

/// The consumer of a transfer's response body, called on the engine thread (``finish()`` and
/// ``fail(_:)`` also on a caller's thread when a transfer is rejected before it is submitted).
///
/// One per `ResponseBodyDisposition`: ``BufferedBodySink`` collects in memory,
/// ``StreamBodySink`` hands chunks to a ``ResponseBodyStream`` with back-pressure and
/// ``FileBodySink`` writes to a new file.
package protocol ResponseBodySink: AnyObject {
    /// Called once, when the final head is complete, with the size announced by the server.
    func expect(contentLength: Int?)
    /// Called for every chunk of decoded body bytes.
    func receive(_ bytes: UnsafeRawBufferPointer) -> SinkDecision
    /// Whether a sink that paused the transfer can take bytes again.
    var acceptsMore: Bool { get }
    /// The body ended: flush and close. Returns the error to report instead of success.
    func finish() -> CurlewError?
    /// Same as ``finish()``, for a sink that hands the exchange's final metrics on (a stream,
    /// whose caller got the head without them); `measured` is called only by such a sink.
    func finish(measured: () -> TransferMetrics) -> CurlewError?
    /// What the caller gets as `RawResponse.content`; called once, at the head for streams,
    /// after ``finish()`` otherwise.
    func content() -> ResponseContent
    /// The transfer failed: end a stream with the error, remove a partial file.
    func fail(_ error: CurlewError)
    /// Whether the sink needs the final status and header block before the body
    /// (``headArrived(status:headerBlock:)``); only downloads do.
    var wantsHead: Bool { get }
    /// The final head, before the first body byte (or at the end when there is no body); called
    /// at most twice, the second call ignored. Only when ``wantsHead``.
    func headArrived(status: Int, headerBlock: [UInt8])
}

extension ResponseBodySink {
    /// Most sinks decide nothing at the head.
    package var wantsHead: Bool { false }
    /// Nothing to decide.
    package func headArrived(status: Int, headerBlock: [UInt8]) {}
    /// Most sinks have no use for the final metrics.
    package func finish(measured: () -> TransferMetrics) -> CurlewError? { finish() }
}

/// Collects the body into one `Data`, enforcing the maximum size in decoded bytes and reserving
/// capacity from `Content-Length` so a large body is copied once.
///
/// The bytes gather in one `malloc` block that the `Data` handed out then owns (freed by it):
/// appending to a `Data` chunk by chunk spent more in `Data`'s own bookkeeping and exclusivity
/// checks than in the copying.
///
/// Touched only by the transfer's thread, never re-entered while modified: no dynamic
/// exclusivity checks (see ``CurlEasyTransfer``).
package final class BufferedBodySink: ResponseBodySink {
    /// The block, `nil` until the first bytes or the expected length arrive, and after
    /// ``content()`` handed it over.
    @exclusivity(unchecked) private var storage: UnsafeMutableRawPointer?
    @exclusivity(unchecked) private var capacity = 0
    @exclusivity(unchecked) private var count = 0
    /// The body once handed out; bytes arriving later (none do today) are appended to it.
    @exclusivity(unchecked) private var handedOut: Data?
    private let maximumSize: Int

    /// Creates a sink that aborts beyond `maximumSize` bytes.
    package init(maximumSize: Int) {
        self.maximumSize = maximumSize
    }

    deinit {
        free(storage)
    }

    /// The bytes received so far (a view of the block, not a copy).
    package var body: Data {
        if let handedOut { return handedOut }
        guard let storage, count > 0 else { return Data() }
        return Data(bytesNoCopy: storage, count: count, deallocator: .none)
    }

    package func expect(contentLength: Int?) {
        guard let contentLength, contentLength > 0, handedOut == nil else { return }
        reserve(min(contentLength, maximumSize))
    }

    package func receive(_ bytes: UnsafeRawBufferPointer) -> SinkDecision {
        let received = (handedOut?.count ?? count) + bytes.count
        guard received <= maximumSize else {
            return .abort(.bodyTooLarge, "response body exceeds the maximum of \(maximumSize) bytes")
        }
        guard let source = bytes.baseAddress, !bytes.isEmpty else { return .proceed }
        if handedOut != nil {
            handedOut?.append(contentsOf: bytes)
            return .proceed
        }
        if received > capacity {
            // Doubling (within the maximum) when the length was not announced.
            reserve(min(max(received, 2 * capacity, 1024), maximumSize))
        }
        guard let storage, received <= capacity else {
            return .abort(.transportFailure, "out of memory for a response body of \(received) bytes")
        }
        (storage + count).copyMemory(from: source, byteCount: bytes.count)
        count = received
        return .proceed
    }

    package var acceptsMore: Bool { true }

    package func finish() -> CurlewError? { nil }

    package func content() -> ResponseContent {
        if let handedOut { return .data(handedOut) }
        let data: Data
        if let storage, count > 0 {
            // The `Data` owns the block from here: `free` when its last copy goes.
            data = Data(bytesNoCopy: storage, count: count, deallocator: .free)
        } else {
            data = Data()
            free(storage)
        }
        storage = nil
        capacity = 0
        handedOut = data
        return .data(data)
    }

    package func fail(_ error: CurlewError) {}

    /// Grows the block to `newCapacity` bytes (never shrinks it); on failure the block stays.
    private func reserve(_ newCapacity: Int) {
        guard newCapacity > capacity, let grown = realloc(storage, newCapacity) else { return }
        storage = grown
        capacity = newCapacity
    }
}

/// Hands body chunks to a ``ResponseBodyBuffer`` read through a ``ResponseBodyStream``: a chunk
/// the buffer refuses (reader behind the high-water mark) pauses the transfer; the buffer asks the
/// engine to un-pause once the reader has caught up, and to cancel when the reader goes away.
///
/// ``TransferOptions/maximumBodySize`` does not apply: the body is never held whole, and a reader
/// that wants a limit uses ``ResponseBodyStream/collect(upTo:)``.
package final class StreamBodySink: ResponseBodySink {
    /// The hand-off shared with the stream the caller reads.
    package let buffer: ResponseBodyBuffer

    /// Creates a sink whose buffer pauses above `highWaterMark` unread bytes and calls `hooks`
    /// to un-pause or cancel the transfer.
    package init(highWaterMark: Int, hooks: TransferHooks) {
        self.buffer = ResponseBodyBuffer(highWaterMark: highWaterMark, onResume: hooks.unpause, onCancel: hooks.cancel)
    }

    package func expect(contentLength: Int?) {}

    package func receive(_ bytes: UnsafeRawBufferPointer) -> SinkDecision {
        switch buffer.offer(bytes) {
        case .some(true): .proceed
        case .some(false): .pause
        case .none: .abort(.cancelled, "the response stream was cancelled")
        }
    }

    package var acceptsMore: Bool { buffer.acceptsMore }

    package func finish() -> CurlewError? {
        buffer.finish(nil)
        return nil
    }

    package func finish(measured: () -> TransferMetrics) -> CurlewError? {
        buffer.finish(nil, metrics: measured())
        return nil
    }

    package func content() -> ResponseContent { .stream(ResponseBodyStream(buffer: buffer)) }

    package func fail(_ error: CurlewError) { buffer.finish(error) }
}

/// Writes the body to a file created by ``create(path:request:)`` (on the caller's thread, before
/// the transfer is submitted). The file is removed when the transfer fails, is cancelled, or is
/// dropped before finishing; only a finished file is left behind.
///
/// ``TransferOptions/maximumBodySize`` does not apply: the limit protects memory, and the body
/// never is in memory.
package final class FileBodySink: ResponseBodySink {
    /// Where the body goes.
    package let path: String
    /// Open while receiving; `-1` once closed.
    private var descriptor: Int32
    /// Bytes written so far.
    package private(set) var length: Int64 = 0
    /// Set once the file was either kept (finished) or removed.
    private var settled = false
    /// The request, for errors.
    private let request: RequestSummary

    private init(path: String, descriptor: Int32, request: RequestSummary) {
        self.path = path
        self.descriptor = descriptor
        self.request = request
    }

    /// Creates the file with `O_EXCL|O_NOFOLLOW` and mode 0600: an existing file or a symbolic
    /// link is never written through.
    /// - Throws: `.fileNotWritable` when the file cannot be created.
    package static func create(path: String, request: RequestSummary) throws(CurlewError) -> FileBodySink {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            let reason = String(cString: strerror(errno))
            throw CurlewError(code: .fileNotWritable, message: "could not create \(path): \(reason)", request: request)
        }
        return FileBodySink(path: path, descriptor: descriptor, request: request)
    }

    deinit {
        discard()
    }

    package func expect(contentLength: Int?) {}

    package func receive(_ bytes: UnsafeRawBufferPointer) -> SinkDecision {
        if let failure = Self.writeAll(bytes, to: descriptor) {
            return .abort(.fileNotWritable, "could not write \(path): \(failure)")
        }
        length += Int64(bytes.count)
        return .proceed
    }

    /// Writes every byte to `descriptor`, retrying after `EINTR`; returns the error text of a
    /// failed write, `nil` on success. Shared by every sink that writes a file.
    package static func writeAll(_ bytes: UnsafeRawBufferPointer, to descriptor: Int32) -> String? {
        guard let base = bytes.baseAddress else { return nil }
        var offset = 0
        while offset < bytes.count {
            let written = write(descriptor, base + offset, bytes.count - offset)
            if written < 0 {
                if errno == EINTR { continue }
                return String(cString: strerror(errno))
            }
            offset += written
        }
        return nil
    }

    package var acceptsMore: Bool { true }

    package func finish() -> CurlewError? {
        guard descriptor >= 0 else { return nil }
        let result = close(descriptor)
        descriptor = -1
        guard result == 0 else {
            let reason = String(cString: strerror(errno))
            discard()
            return CurlewError(code: .fileNotWritable, message: "could not write \(path): \(reason)", request: request)
        }
        settled = true
        return nil
    }

    package func content() -> ResponseContent { .file(path: path, length: length) }

    package func fail(_ error: CurlewError) { discard() }

    /// Closes and removes the partial file (once).
    private func discard() {
        guard !settled else { return }
        settled = true
        if descriptor >= 0 {
            close(descriptor)
            descriptor = -1
        }
        unlink(path)
    }
}
