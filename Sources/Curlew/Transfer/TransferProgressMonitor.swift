internal import Synchronization

/// Progress of one call as an `AsyncSequence`: monotonic, throttled to at most about 60 values a
/// second, and ending with a value whose ``TransferProgressUpdate/bytesDone`` is the total when
/// the call succeeds (the sequence simply ends when it fails).
///
/// Built on the event model: the values come from the call's ``ClientEvent/Kind/progress``
/// events, so subscribers of ``APIClient/events`` see the same transfer.
///
/// ```swift
/// let progress = TransferProgressMonitor()
/// async let file = client.download(ReportRequest(), to: folder) { $0.reportProgress(to: progress) }
/// for await update in progress { print(update.bytesDone, update.fraction ?? 0) }
/// let report = try await file
/// ```
///
/// One monitor watches one call; read it from one task.
public final class TransferProgressMonitor: AsyncSequence, Sendable {
    /// A value.
    public typealias Element = TransferProgressUpdate

    private struct State {
        var last: TransferProgressUpdate?
        var lastYield: ContinuousClock.Instant?
        var finished = false
    }

    private let stream: AsyncStream<TransferProgressUpdate>
    private let continuation: AsyncStream<TransferProgressUpdate>.Continuation
    /// Guards the last value, the last delivery time and whether the sequence ended.
    private let state = Mutex(State())
    private let interval: Duration

    /// Creates a monitor delivering at most one value per `interval` (default: 1/60 s) besides the
    /// last one.
    public init(interval: Duration = .microseconds(16_667)) {
        (stream, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(1))
        self.interval = interval
    }

    /// The iterator.
    public func makeAsyncIterator() -> AsyncStream<TransferProgressUpdate>.Iterator {
        stream.makeAsyncIterator()
    }

    /// Offers a value: dropped when it goes backwards, when it arrives sooner than the interval
    /// after the previous one, or after the end.
    func offer(_ update: TransferProgressUpdate) {
        let now = ContinuousClock.now
        let deliver = state.withLock { state -> Bool in
            guard !state.finished else { return false }
            if let last = state.last, update.bytesDone < last.bytesDone || update == last { return false }
            if let lastYield = state.lastYield, now - lastYield < interval { return false }
            state.last = update
            state.lastYield = now
            return true
        }
        if deliver { continuation.yield(update) }
    }

    /// Ends the sequence, after `final` (the total) when the call succeeded.
    func finish(with final: TransferProgressUpdate?) {
        let deliver = state.withLock { state -> Bool in
            guard !state.finished else { return false }
            state.finished = true
            guard let final else { return false }
            if let last = state.last, last == final || final.bytesDone < last.bytesDone { return false }
            state.last = final
            return true
        }
        if let final, deliver { continuation.yield(final) }
        continuation.finish()
    }
}
