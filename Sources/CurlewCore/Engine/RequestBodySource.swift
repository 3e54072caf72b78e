package import Foundation
internal import Synchronization
#if canImport(Glibc)
    internal import Glibc
#endif

/// How the engine reaches one transfer from other threads: both post a command to the inbox.
/// Built only for transfers that need it (streamed responses and streamed request bodies).
package struct TransferHooks: Sendable {
    /// Posts `.unpause(id)`.
    package let unpause: @Sendable () -> Void
    /// Posts `.cancel(id)`.
    package let cancel: @Sendable () -> Void
}

/// What the read callback (`CURLOPT_READFUNCTION`) does with the buffer libcurl offers.
package enum ReadDecision {
    /// This many bytes were copied; `0` ends the body.
    case bytes(Int)
    /// Nothing available yet: return `CURL_READFUNC_PAUSE`; the source posts `.unpause` later.
    case pause
    /// Abort the transfer with this error (`CURL_READFUNC_ABORT`).
    case abort(CurlewError)
}

/// A request body read while it is sent: a file or an async chunk stream.
/// Owned by one ``CurlEasyTransfer``; ``read(into:)`` and ``rewind()`` run on the engine thread.
package enum RequestBodySource {
    /// A regular file, opened on the caller's thread.
    case file(FileRequestBody)
    /// Chunks produced by a task, handed over through a mutex.
    case stream(RequestBodyPump)

    /// The length to announce, `nil` for chunked.
    package var length: Int64? {
        switch self {
        case .file(let file): file.size
        case .stream(let pump): pump.declaredLength
        }
    }

    /// Fills `buffer` from the body (engine thread).
    package func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadDecision {
        switch self {
        case .file(let file): file.read(into: buffer)
        case .stream(let pump): pump.read(into: buffer)
        }
    }

    /// Whether a read after a pause would make progress.
    package var isReadable: Bool {
        switch self {
        case .file: true
        case .stream(let pump): pump.isReadable
        }
    }

    /// Stops producing and frees resources (transfer over).
    package func close() {
        switch self {
        case .file(let file): file.close()
        case .stream(let pump): pump.cancel()
        }
    }
}

/// A regular file sent as the request body; opened on the caller's thread so a missing or
/// unreadable file fails before anything is sent. Its length is taken from `fstat` at that moment.
/// Engine thread only after submission.
package final class FileRequestBody {
    /// The path, for errors.
    package let path: String
    /// The file's size when it was opened; the `Content-Length` sent.
    package let size: Int64
    private var descriptor: Int32
    private var sent: Int64 = 0
    private let request: RequestSummary

    /// Opens `path` read-only.
    /// - Throws: `.fileUnreadable` when it cannot be opened or is not a regular file.
    package init(path: String, request: RequestSummary) throws(CurlewError) {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            throw CurlewError(code: .fileUnreadable, message: "could not open \(path): \(String(cString: strerror(errno)))", request: request)
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            Glibc.close(descriptor)
            throw CurlewError(code: .fileUnreadable, message: "\(path) is not a regular file", request: request)
        }
        self.path = path
        self.descriptor = descriptor
        self.size = Int64(info.st_size)
        self.request = request
    }

    deinit { close() }

    /// Reads the next bytes; a file that ends before its size was sent, or is longer than that
    /// when its last bytes are read, fails the transfer (`.fileUnreadable`).
    package func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadDecision {
        let wanted = Int(min(Int64(buffer.count), size - sent))
        guard wanted > 0, let base = buffer.baseAddress else { return .bytes(0) }
        while true {
            let count = Glibc.read(descriptor, base, wanted)
            if count < 0, errno == EINTR { continue }
            guard count > 0 else {
                let reason = count < 0 ? String(cString: strerror(errno)) : "it ended after \(sent) of \(size) bytes"
                return .abort(CurlewError(code: .fileUnreadable, message: "could not read \(path): \(reason)", request: request))
            }
            sent += Int64(count)
            // The last bytes: a file that grew since it was opened would be sent cut short.
            if sent == size, let change = Self.sizeChange(of: descriptor, announced: size, path: path) {
                return .abort(CurlewError(code: .fileUnreadable, message: change, request: request))
            }
            return .bytes(count)
        }
    }

    /// Why an open file being sent as `announced` bytes can no longer be (it grew or shrank since
    /// it was measured); `nil` when its size is still `announced`. Checked once its last bytes
    /// were read, here and by multipart file parts.
    package static func sizeChange(of descriptor: Int32, announced: Int64, path: String) -> String? {
        var info = stat()
        guard fstat(descriptor, &info) == 0, Int64(info.st_size) != announced else { return nil }
        return "\(path) changed size while it was sent (\(announced) bytes announced, now \(info.st_size))"
    }

    /// Why a file that was empty when it was opened can no longer be sent as 0 bytes (it has
    /// bytes now); `nil` while it is still empty, and for a file that had bytes (``read(into:)``
    /// checks those at their last bytes). libcurl never reads an empty body, so the transfer asks
    /// right before each attempt is sent.
    package var emptyFileChange: String? {
        guard size == 0, descriptor >= 0 else { return nil }
        return Self.sizeChange(of: descriptor, announced: 0, path: path)
    }

    /// Moves back to `offset` for libcurl to send the body again (a 307/308 redirect).
    package func seek(to offset: Int64) -> Bool {
        guard offset >= 0, offset <= size, lseek(descriptor, off_t(offset), SEEK_SET) == off_t(offset) else { return false }
        sent = offset
        return true
    }

    /// Closes the file (once).
    package func close() {
        guard descriptor >= 0 else { return }
        Glibc.close(descriptor)
        descriptor = -1
    }
}

/// Feeds a ``RequestBodyStream`` to the read callback: a task iterates the chunks into a
/// mutex-guarded ``RequestBodyPumpState``; the read callback copies out of it and pauses when it
/// is empty, and the task posts `.unpause` when bytes arrive. The task waits while more than
/// ``capacity`` bytes are unread, so a fast producer never runs ahead of the network.
package final class RequestBodyPump: Sendable {
    /// The announced length, `nil` for chunked.
    package let declaredLength: Int64?
    /// Guards the chunks, counters, ending and both waiting sides.
    private let state: Mutex<RequestBodyPumpState>
    /// The producing task; set once by ``start(_:)`` and cancelled by ``cancel()``.
    private let task = Mutex<Task<Void, Never>?>(nil)
    private let hooks: TransferHooks

    /// Unread bytes above which the producing task waits.
    package static let capacity = 256 * 1024

    /// Creates a pump for a stream of `length` bytes (`nil`: unknown); `hooks.unpause` wakes a
    /// paused read callback.
    package init(length: Int64?, request: RequestSummary, hooks: TransferHooks) {
        self.declaredLength = length
        self.state = Mutex(RequestBodyPumpState(declaredLength: length, capacity: Self.capacity, request: request))
        self.hooks = hooks
    }

    /// Starts iterating `stream`'s chunks in a new task.
    package func start(_ stream: RequestBodyStream) {
        let pump = self
        let producer = Task {
            do {
                for try await chunk in stream.makeChunks() {
                    guard await pump.push(chunk) else { return }
                }
                pump.end(nil)
            } catch {
                pump.end(error)
            }
        }
        let cancelled = task.withLock { slot -> Bool in
            slot = producer
            return state.withLock { $0.isCancelled }
        }
        if cancelled { producer.cancel() }
    }

    /// Producer side: queues a chunk, then waits while the buffer is above capacity.
    /// Returns `false` when the transfer is over (stop producing).
    private func push(_ chunk: Data) async -> Bool {
        let (keepGoing, wake) = state.withLock { $0.append(chunk) }
        if wake { hooks.unpause() }
        guard keepGoing else { return false }
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            if !state.withLock({ $0.waitForSpace(continuation) }) { continuation.resume() }
        }
        return !state.withLock { $0.isOver }
    }

    /// Producer side: the sequence ended, or threw `error`.
    private func end(_ error: (any Error)?) {
        if state.withLock({ $0.end(error) }) { hooks.unpause() }
    }

    /// Engine thread: copies queued bytes into libcurl's buffer.
    package func read(into buffer: UnsafeMutableRawBufferPointer) -> ReadDecision {
        let (decision, producer) = state.withLock { $0.read(into: buffer) }
        producer?.resume()
        return decision
    }

    /// Whether a read would make progress (bytes queued, or the end known).
    package var isReadable: Bool { state.withLock { $0.isReadable } }

    /// Stops the producer: the transfer is over.
    package func cancel() {
        let producer = state.withLock { $0.cancel() }
        producer?.resume()
        task.withLock { $0?.cancel() }
    }
}

/// The hand-off between a request-body producer task and the read callback, as a value.
package struct RequestBodyPumpState {
    /// The announced length, `nil` for chunked.
    package let declaredLength: Int64?
    /// Unread bytes above which the producer waits.
    package let capacity: Int
    /// The request, for errors.
    package let request: RequestSummary
    private var chunks: [Data] = []
    /// Read offset into `chunks[0]`.
    private var offset = 0
    /// Unread bytes.
    package private(set) var buffered = 0
    /// Bytes the producer handed over.
    package private(set) var produced: Int64 = 0
    /// How the producer ended: success, or the error to fail the transfer with.
    private var ending: Result<Void, CurlewError>?
    /// The read callback returned `CURL_READFUNC_PAUSE` and waits for an `.unpause`.
    package private(set) var readerPaused = false
    /// The producer waits for space.
    private var producer: CheckedContinuation<Void, Never>?
    /// The transfer is over; the producer must stop.
    package private(set) var isCancelled = false

    /// Creates an empty state.
    package init(declaredLength: Int64?, capacity: Int, request: RequestSummary) {
        self.declaredLength = declaredLength
        self.capacity = capacity
        self.request = request
    }

    /// Whether producing makes no more sense (ended, failed or cancelled).
    package var isOver: Bool { isCancelled || ending != nil }

    /// Whether a read would make progress.
    package var isReadable: Bool { buffered > 0 || ending != nil || isCancelled }

    /// Queues a chunk. Returns whether to keep producing and whether to wake a paused reader.
    /// More bytes than declared fail the body.
    package mutating func append(_ chunk: Data) -> (keepGoing: Bool, wakeReader: Bool) {
        guard !isOver else { return (false, false) }
        produced += Int64(chunk.count)
        if let declaredLength, produced > declaredLength {
            ending = .failure(
                CurlewError(
                    code: .bodyStreamFailed,
                    message: "the request body stream produced more than its declared \(declaredLength) bytes", request: request))
            return (false, takeReaderPause())
        }
        guard !chunk.isEmpty else { return (true, false) }
        chunks.append(chunk)
        buffered += chunk.count
        return (true, takeReaderPause())
    }

    /// The producer offers to wait for space; returns `false` when it need not (resume it now).
    package mutating func waitForSpace(_ continuation: CheckedContinuation<Void, Never>) -> Bool {
        guard !isOver, buffered > capacity else { return false }
        producer = continuation
        return true
    }

    /// The producer finished (`nil`) or threw. A short body fails. Returns whether to wake a
    /// paused reader.
    package mutating func end(_ error: (any Error)?) -> Bool {
        guard !isOver else { return false }
        if let error {
            ending = .failure(
                CurlewError(
                    code: .bodyStreamFailed, message: "the request body stream failed: \(error)", request: request, underlying: error))
        } else if let declaredLength, produced != declaredLength {
            ending = .failure(
                CurlewError(
                    code: .bodyStreamFailed,
                    message: "the request body stream ended after \(produced) of its declared \(declaredLength) bytes", request: request))
        } else {
            ending = .success(())
        }
        return takeReaderPause()
    }

    /// The read callback takes up to `buffer.count` bytes; returns the decision and the producer
    /// to resume when space was freed.
    package mutating func read(into buffer: UnsafeMutableRawBufferPointer) -> (ReadDecision, CheckedContinuation<Void, Never>?) {
        if buffered == 0 {
            switch ending {
            case .failure(let error)?: return (.abort(error), nil)
            case .success?: return (.bytes(0), nil)
            case nil:
                if isCancelled { return (.bytes(0), nil) }
                readerPaused = true
                return (.pause, nil)
            }
        }
        var copied = 0
        while copied < buffer.count, let first = chunks.first {
            let available = first.count - offset
            let count = min(available, buffer.count - copied)
            first.withUnsafeBytes { raw in
                let start = raw.baseAddress.map { $0 + offset }
                if let start, let target = buffer.baseAddress { (target + copied).copyMemory(from: start, byteCount: count) }
            }
            copied += count
            offset += count
            if offset == first.count {
                chunks.removeFirst()
                offset = 0
            }
        }
        buffered -= copied
        var resume: CheckedContinuation<Void, Never>?
        if buffered <= capacity, let waiting = producer {
            producer = nil
            resume = waiting
        }
        return (.bytes(copied), resume)
    }

    /// The transfer is over; returns the waiting producer to resume (it then sees ``isOver``).
    package mutating func cancel() -> CheckedContinuation<Void, Never>? {
        isCancelled = true
        chunks.removeAll()
        buffered = 0
        defer { producer = nil }
        return producer
    }

    private mutating func takeReaderPause() -> Bool {
        defer { readerPaused = false }
        return readerPaused
    }
}
