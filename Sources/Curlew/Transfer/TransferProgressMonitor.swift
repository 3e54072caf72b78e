internal import Synchronization

/// Progress of one call as an `AsyncSequence`: monotonic, throttled to at most about 60 values a
/// second, yielding ``/CurlewCore/TransferProgress`` values whose counters never go back, and ending with the
/// totals when the call succeeds (the sequence simply ends when it fails). A resumed download
/// counts the bytes already on disk as received once the server continues them (a `206` the
/// download accepts), goes on through a download that starts over — followed from the restart's
/// first values, the refused answer having counted for nothing — and ends at the file's length.
///
/// Built on the event model: the values come from the call's ``ClientEvent/Kind/progress``
/// events, so subscribers of ``APIClient/events`` see the same transfer.
///
/// ```swift
/// let progress = TransferProgressMonitor()
/// async let file = client.download(ReportRequest(), to: folder) { $0.reportProgress(to: progress) }
/// for await update in progress { print(update.bytesReceived, update.fractionReceived ?? 0) }
/// let report = try await file
/// ```
///
/// One monitor watches one call; read it from one task.
public final class TransferProgressMonitor: AsyncSequence, Sendable {
    /// A value.
    public typealias Element = TransferProgress

    private struct State {
        var last: TransferProgress?
        var lastYield: ContinuousClock.Instant?
        var finished = false
    }

    private let stream: AsyncStream<TransferProgress>
    private let continuation: AsyncStream<TransferProgress>.Continuation
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
    public func makeAsyncIterator() -> AsyncStream<TransferProgress>.Iterator {
        stream.makeAsyncIterator()
    }

    /// Offers a value: dropped when either counter goes backwards, when it arrives sooner than
    /// the interval after the previous one, or after the end. A delivered value also goes to `observer`.
    ///
    /// Delivery happens under the lock, so values reach the sequence and the observer in order
    /// even when a late offer races ``finish(with:notifying:)``: nothing follows the final value.
    func offer(_ update: TransferProgress, notifying observer: Observer? = nil) {
        let now = ContinuousClock.now
        state.withLock { state in
            guard !state.finished else { return }
            if let last = state.last, !update.isAtLeast(last) || update == last { return }
            if let lastYield = state.lastYield, now - lastYield < interval { return }
            state.last = update
            state.lastYield = now
            continuation.yield(update)
            observer?(update)
        }
    }

    /// Ends the sequence, after `final` (the totals) when the call succeeded; `observer` gets the
    /// final value too. A counter `final` does not know (a streamed response body) keeps its last
    /// value.
    func finish(with final: TransferProgress?, notifying observer: Observer? = nil) {
        state.withLock { state in
            guard !state.finished else { return }
            state.finished = true
            if var final = final {
                if let last = state.last {
                    final.bytesSent = Swift.max(final.bytesSent, last.bytesSent)
                    final.bytesReceived = Swift.max(final.bytesReceived, last.bytesReceived)
                    final.totalBytesToSend = final.totalBytesToSend ?? last.totalBytesToSend
                    final.totalBytesToReceive = final.totalBytesToReceive ?? last.totalBytesToReceive
                }
                if final != state.last {
                    state.last = final
                    continuation.yield(final)
                    observer?(final)
                }
            }
            continuation.finish()
        }
    }

    /// Also told about every delivered value (an accessory drawing the progress).
    typealias Observer = @Sendable (TransferProgress) -> Void
}
