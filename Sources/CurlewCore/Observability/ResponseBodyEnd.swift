internal import Synchronization

/// How a streamed response body ended, told once to the code watching it (metrics, spans, a
/// draining `TransportService`) through ``ResponseBodyStream/whenEnded(_:)``.
package enum ResponseBodyEnd: Sendable {
    /// The last byte arrived; what libcurl measured over the whole exchange (`nil` for a body that
    /// did not come from `CurlTransport`, e.g. a mock's or a cache's).
    case finished(TransferMetrics?)
    /// The transfer failed midway (its ``CurlewError`` carries the metrics measured so far).
    case failed(any Error)
    /// The reader cancelled or dropped the stream before the end; what libcurl measured up to
    /// the moment the engine stopped the transfer (`nil` for a body not from `CurlTransport`).
    case cancelled(TransferMetrics?)

    /// The error of a body that did not finish: `CancellationError` for a cancelled one.
    package var error: (any Error)? {
        switch self {
        case .finished: nil
        case .failed(let error): (error as? CurlewError)?.code == .cancelled ? CancellationError() : error
        case .cancelled: CancellationError()
        }
    }

    /// What libcurl measured: the whole exchange, or up to a failure or a cancel.
    package var metrics: TransferMetrics? {
        switch self {
        case .finished(let metrics), .cancelled(let metrics): metrics
        case .failed(let error): (error as? CurlewError)?.metrics
        }
    }
}

/// The end of one streamed body and who waits for it (guarded by the buffer's `endWatch` mutex):
/// the first end reported wins, each observer is called exactly once, outside the lock.
package struct ResponseBodyEndWatch: ~Copyable {
    package typealias Observer = @Sendable (ResponseBodyEnd) -> Void
    package private(set) var end: ResponseBodyEnd?
    private var observers: [Observer] = []

    package init() {}

    /// Records the end (unless one was recorded); returns the observers to call with it.
    package mutating func report(_ end: ResponseBodyEnd) -> [Observer] {
        guard self.end == nil else { return [] }
        self.end = end
        defer { observers = [] }
        return observers
    }

    /// Keeps `observer` until the end; `false` when the body already ended (call it now).
    package mutating func add(_ observer: @escaping Observer) -> Bool {
        guard end == nil else { return false }
        observers.append(observer)
        return true
    }
}

extension ResponseBodyBuffer {
    /// Calls `observer` once when the body ends — now, if it already has.
    package func whenEnded(_ observer: @escaping @Sendable (ResponseBodyEnd) -> Void) {
        let pending = endWatch.withLock { $0.add(observer) }
        if !pending, let end = endWatch.withLock({ $0.end }) { observer(end) }
    }

    /// Records how the body ended and tells the observers.
    package func reportEnd(_ end: ResponseBodyEnd) {
        for observer in endWatch.withLock({ $0.report(end) }) { observer(end) }
    }

    /// What libcurl measured over the exchange, once the body has arrived whole.
    package var finalMetrics: TransferMetrics? {
        endWatch.withLock { watch in
            if case .finished(let metrics)? = watch.end { return metrics }
            return nil
        }
    }
}

extension ResponseBodyStream {
    /// What libcurl measured over the whole exchange (timings, bytes with headers, reuse, HTTP
    /// version), known once the last byte has arrived: `nil` before, after a failure (the error
    /// carries them), and for a body that did not come from `CurlTransport`.
    public var metrics: TransferMetrics? { buffer.finalMetrics }

    /// Calls `observer` once when the body ends: finished, failed or cancelled by its reader.
    package func whenEnded(_ observer: @escaping @Sendable (ResponseBodyEnd) -> Void) {
        buffer.whenEnded(observer)
    }
}
