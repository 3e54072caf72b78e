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
    /// after the previous one, or after the end. A delivered value also goes to `observer`.
    ///
    /// Delivery happens under the lock, so values reach the sequence and the observer in order
    /// even when a late offer races ``finish(with:notifying:)``: nothing follows the final value.
    func offer(_ update: TransferProgressUpdate, notifying observer: Observer? = nil) {
        let now = ContinuousClock.now
        state.withLock { state in
            guard !state.finished else { return }
            if let last = state.last, update.bytesDone < last.bytesDone || update == last { return }
            if let lastYield = state.lastYield, now - lastYield < interval { return }
            state.last = update
            state.lastYield = now
            continuation.yield(update)
            observer?(update)
        }
    }

    /// Ends the sequence, after `final` (the total) when the call succeeded; `observer` gets the
    /// final value too.
    func finish(with final: TransferProgressUpdate?, notifying observer: Observer? = nil) {
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            if let final, state.last.map({ $0 != final && final.bytesDone >= $0.bytesDone }) ?? true {
                state.last = final
                continuation.yield(final)
                observer?(final)
            }
            continuation.finish()
        }
    }

    /// Also told about every delivered value (an accessory drawing the progress).
    typealias Observer = @Sendable (TransferProgressUpdate) -> Void
}
