package import Foundation
internal import Synchronization

/// The hand-off between the thread that receives a streamed body (the engine thread) and the task
/// that reads it: a `Mutex` around ``ResponseBodyBufferState``, with every side effect (resume a
/// reader, un-pause or cancel the transfer) done after unlocking.
package final class ResponseBodyBuffer: Sendable {
    private let state: Mutex<ResponseBodyBufferState>
    /// Asks the transport to deliver again after a pause; set once before the first chunk.
    private let onResume: @Sendable () -> Void
    /// Asks the transport to stop the transfer.
    private let onCancel: @Sendable () -> Void
    /// How the body ended and who waits for it (``whenEnded(_:)``); touched only at the end.
    let endWatch = Mutex(ResponseBodyEndWatch())

    /// Creates a buffer.
    /// - Parameters:
    ///   - highWaterMark: Unread bytes above which the producer is told to pause.
    ///   - onResume: Called (unlocked, on the reader's thread) when a paused producer may deliver again.
    ///   - onCancel: Called (unlocked) when the reader cancelled or went away before the end.
    package init(
        highWaterMark: Int,
        onResume: @escaping @Sendable () -> Void, onCancel: @escaping @Sendable () -> Void
    ) {
        self.state = Mutex(ResponseBodyBufferState(highWaterMark: highWaterMark))
        self.onResume = onResume
        self.onCancel = onCancel
    }

    /// Whether the producer may deliver: it is not waiting for the reader to catch up.
    package var acceptsMore: Bool { state.withLock { !$0.producerPaused } }

    /// Unread bytes (tests and diagnostics).
    package var bufferedBytes: Int { state.withLock { $0.bufferedBytes } }

    // MARK: Producer side

    /// Offers a chunk; `false` means "not taken, pause and deliver it again after a resume".
    /// Returns `nil` when the reader is gone (abort the transfer).
    package func offer(_ bytes: UnsafeRawBufferPointer) -> Bool? {
        let action = state.withLock { $0.offer(count: bytes.count) { Data(bytes) } }
        switch action {
        case .accepted(let waiter, let chunk):
            waiter?.resume(returning: chunk)
            return true
        case .pause:
            return false
        case .abort:
            return nil
        }
    }

    /// The body ended (with `nil`) or failed; a reader gets the rest of the chunks, then the end
    /// or the error. `metrics`: what the transport measured over the whole exchange. Observers
    /// (``whenEnded(_:)``) hear of the end before a reader can see it.
    ///
    /// A body its reader stopped ends here too: the transport always finishes or fails the
    /// transfer it was asked to stop, and only then is it known what libcurl measured, so
    /// observers hear of the cancel (with those metrics) from this call, not from ``cancel()``.
    package func finish(_ error: (any Error)?, metrics: TransferMetrics? = nil) {
        let (ended, stoppedByReader) = state.withLock { ($0.ending != nil, $0.stopped) }
        if stoppedByReader {
            reportEnd(.cancelled(metrics ?? (error as? CurlewError)?.metrics))
        } else if !ended {
            reportEnd(error.map { .failed($0) } ?? .finished(metrics))
        }
        let waiter = state.withLock { $0.finish(error) }
        if let waiter {
            if let error { waiter.resume(throwing: error) } else { waiter.resume(returning: nil) }
        }
    }

    // MARK: Consumer side

    /// The next chunk, `nil` at the end; waits while the buffer is empty. Cancelling the waiting
    /// task cancels the stream.
    package func next() async throws -> Data? {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Data?, any Error>) in
                let action = state.withLock { $0.next(continuation) }
                switch action {
                case .deliver(let result, let resume):
                    continuation.resume(with: result)
                    if resume { onResume() }
                case .wait(let resume):
                    if resume { onResume() }
                }
            }
        } onCancel: {
            cancel()
        }
    }

    /// Stops the stream: drops unread chunks, fails a waiting reader and, unless the body already
    /// ended, asks the transport to stop the transfer (whose end, reported through
    /// ``finish(_:metrics:)``, tells the observers).
    package func cancel() {
        let (waiter, stop) = state.withLock { $0.cancel() }
        waiter?.resume(throwing: CancellationError())
        if stop { onCancel() }
    }

    /// The whole body, when it has already ended without an error and nobody has read from
    /// the buffer yet (a small answer often arrives whole with its head); the buffer is then
    /// read to its end. `nil` otherwise: read it chunk by chunk.
    package func takeWholeIfEnded() -> Data? {
        state.withLock { $0.takeWholeIfEnded() }
    }

    /// The last copy of the stream is gone: stop the transfer unless the body already ended.
    package func consumerGone() {
        guard state.withLock({ $0.consumerGone() }) else { return }
        onCancel()
    }
}

/// The state of a streamed body as a value: chunks not yet read, the reader waiting, whether the
/// producer is paused, and how the body ended. Pure transitions returning what to do.
package struct ResponseBodyBufferState {
    package typealias Waiter = CheckedContinuation<Data?, any Error>

    /// Unread bytes above which ``offer(count:_:)`` asks the producer to pause.
    package let highWaterMark: Int
    /// Queued chunks smaller than this take the next chunk's bytes instead of queueing another
    /// `Data`: libcurl delivers at most 16 KiB at a time, and fewer, larger chunks mean fewer
    /// wake-ups for the reader.
    package static let coalescingLimit = 64 * 1024
    package private(set) var chunks: [Data] = []
    private var head = 0
    package private(set) var bufferedBytes = 0
    private var waiter: Waiter?
    package private(set) var producerPaused = false
    package private(set) var ending: Result<Void, any Error>?
    /// The reader cancelled or went away before the end.
    package private(set) var stopped = false
    /// A reader asked for a chunk, or took the whole body.
    private var readingStarted = false

    /// Creates an empty buffer state.
    package init(highWaterMark: Int) { self.highWaterMark = highWaterMark }

    /// What the producer does with an offered chunk.
    package enum OfferAction {
        /// Taken: resume the waiting reader (if any) with the chunk.
        case accepted(Waiter?, Data)
        /// Not taken: pause and offer it again after a resume.
        case pause
        /// The reader is gone: abort the transfer.
        case abort
    }

    /// Offers `count` bytes, copied by `copy` only when taken.
    package mutating func offer(count: Int, _ copy: () -> Data) -> OfferAction {
        if stopped { return .abort }
        if let waiter {
            self.waiter = nil
            return .accepted(waiter, copy())
        }
        guard bufferedBytes < highWaterMark else {
            producerPaused = true
            return .pause
        }
        let chunk = copy()
        if chunks.count > head, let last = chunks.indices.last, chunks[last].count < Self.coalescingLimit {
            chunks[last].append(chunk)
        } else {
            chunks.append(chunk)
        }
        bufferedBytes += chunk.count
        return .accepted(nil, chunk)
    }

    /// Whether the body ended or the reader stopped it.
    package var hasEnded: Bool { ending != nil || stopped }

    /// Records the end of the body; returns the waiting reader to resume with it.
    package mutating func finish(_ error: (any Error)?) -> Waiter? {
        guard ending == nil else { return nil }
        ending = error.map { .failure($0) } ?? .success(())
        defer { waiter = nil }
        return chunks.count > head ? nil : waiter
    }

    /// What a reader asking for the next chunk gets.
    package enum NextAction {
        /// Resume the reader now with this; then resume the producer if asked.
        case deliver(Result<Data?, any Error>, resumeProducer: Bool)
        /// The reader waits (its continuation is kept); resume the producer if asked.
        case wait(resumeProducer: Bool)
    }

    /// A reader asks for the next chunk.
    package mutating func next(_ continuation: Waiter) -> NextAction {
        readingStarted = true
        if stopped { return .deliver(.failure(CancellationError()), resumeProducer: false) }
        if head < chunks.count {
            let chunk = chunks[head]
            head += 1
            bufferedBytes -= chunk.count
            if head == chunks.count {
                chunks.removeAll(keepingCapacity: true)
                head = 0
            }
            let resume = producerPaused && bufferedBytes <= highWaterMark / 2
            if resume { producerPaused = false }
            return .deliver(.success(chunk), resumeProducer: resume)
        }
        if let ending {
            switch ending {
            case .success: return .deliver(.success(nil), resumeProducer: false)
            case .failure(let error): return .deliver(.failure(error), resumeProducer: false)
            }
        }
        waiter = continuation
        defer { producerPaused = false }
        return .wait(resumeProducer: producerPaused)
    }

    /// The whole body when it ended without an error before any read; the state is then read
    /// to its end.
    package mutating func takeWholeIfEnded() -> Data? {
        guard !readingStarted, !stopped, case .success = ending else { return nil }
        readingStarted = true
        let whole = chunks.count == 1 ? chunks[0] : chunks.reduce(into: Data()) { $0.append($1) }
        chunks.removeAll()
        head = 0
        bufferedBytes = 0
        return whole
    }

    /// Returns the waiter to fail and whether the transfer must be stopped.
    package mutating func cancel() -> (Waiter?, Bool) {
        guard !stopped else { return (nil, false) }
        stopped = true
        chunks.removeAll()
        head = 0
        bufferedBytes = 0
        defer { waiter = nil }
        return (waiter, ending == nil)
    }

    /// The reader went away; returns whether the transfer must be stopped.
    package mutating func consumerGone() -> Bool {
        cancel().1
    }
}
