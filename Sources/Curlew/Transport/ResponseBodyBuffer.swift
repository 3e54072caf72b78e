internal import Foundation
internal import Synchronization

/// The hand-off between the thread that receives a streamed body (the engine thread) and the task
/// that reads it: a `Mutex` around ``ResponseBodyBufferState``, with every side effect (resume a
/// reader, un-pause or cancel the transfer) done after unlocking.
final class ResponseBodyBuffer: Sendable {
    private let state: Mutex<ResponseBodyBufferState>
    /// Asks the transport to deliver again after a pause; set once before the first chunk.
    private let onResume: @Sendable () -> Void
    /// Asks the transport to stop the transfer.
    private let onCancel: @Sendable () -> Void

    init(highWaterMark: Int, onResume: @escaping @Sendable () -> Void, onCancel: @escaping @Sendable () -> Void) {
        self.state = Mutex(ResponseBodyBufferState(highWaterMark: highWaterMark))
        self.onResume = onResume
        self.onCancel = onCancel
    }

    // MARK: Producer side

    /// Offers a chunk; `false` means "not taken, pause and deliver it again after a resume".
    /// Returns `nil` when the reader is gone (abort the transfer).
    func offer(_ bytes: UnsafeRawBufferPointer) -> Bool? {
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

    /// The body ended (with `nil`) or failed.
    func finish(_ error: (any Error)?) {
        let waiter = state.withLock { $0.finish(error) }
        if let waiter {
            if let error { waiter.resume(throwing: error) } else { waiter.resume(returning: nil) }
        }
    }

    // MARK: Consumer side

    func next() async throws -> Data? {
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

    func cancel() {
        let (waiter, stop) = state.withLock { $0.cancel() }
        waiter?.resume(throwing: CancellationError())
        if stop { onCancel() }
    }

    func consumerGone() {
        if state.withLock({ $0.consumerGone() }) { onCancel() }
    }
}

/// The state of a streamed body as a value: chunks not yet read, the reader waiting, whether the
/// producer is paused, and how the body ended. Pure transitions returning what to do.
struct ResponseBodyBufferState {
    typealias Waiter = CheckedContinuation<Data?, any Error>

    let highWaterMark: Int
    private(set) var chunks: [Data] = []
    private var head = 0
    private(set) var bufferedBytes = 0
    private var waiter: Waiter?
    private(set) var producerPaused = false
    private var ending: Result<Void, any Error>?
    private var stopped = false

    init(highWaterMark: Int) { self.highWaterMark = highWaterMark }

    enum OfferAction {
        case accepted(Waiter?, Data)
        case pause
        case abort
    }

    mutating func offer(count: Int, _ copy: () -> Data) -> OfferAction {
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
        chunks.append(chunk)
        bufferedBytes += chunk.count
        return .accepted(nil, chunk)
    }

    mutating func finish(_ error: (any Error)?) -> Waiter? {
        guard ending == nil else { return nil }
        ending = error.map { .failure($0) } ?? .success(())
        defer { waiter = nil }
        return chunks.count > head ? nil : waiter
    }

    enum NextAction {
        case deliver(Result<Data?, any Error>, resumeProducer: Bool)
        case wait(resumeProducer: Bool)
    }

    mutating func next(_ continuation: Waiter) -> NextAction {
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

    /// Returns the waiter to fail and whether the transfer must be stopped.
    mutating func cancel() -> (Waiter?, Bool) {
        guard !stopped else { return (nil, false) }
        stopped = true
        chunks.removeAll()
        head = 0
        bufferedBytes = 0
        defer { waiter = nil }
        return (waiter, ending == nil)
    }

    mutating func consumerGone() -> Bool {
        cancel().1
    }
}
