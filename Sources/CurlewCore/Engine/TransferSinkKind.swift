/// Where the engine puts a response body: the engine's own sinks for memory, streams and files,
/// or a sink the layer above makes (a download). The engine never names what it does not own.
package enum TransferSinkKind: Sendable {
    /// In memory, up to ``TransferOptions/maximumBodySize``; the caller is resumed at the end.
    case collect
    /// Handed to a ``ResponseBodyStream`` with back-pressure; the caller is resumed at the head.
    case stream(highWaterMark: Int)
    /// Into a new file at `path`.
    case file(path: String)
    /// A sink made by the layer above.
    case custom(any ResponseBodySinkMaker)
}

/// Makes the sink of one transfer for the layer above the engine (a download's status-aware,
/// resumable file).
package protocol ResponseBodySinkMaker: Sendable {
    /// The sink for `request`; throws when it cannot be made (the file cannot be created), before
    /// anything is sent.
    func makeSink(for request: RequestSummary) throws(CurlewError) -> any ResponseBodySink
    /// A stall detector for the transfer: fewer than `bytesPerSecond` over `seconds` fails it.
    var stallLimit: (bytesPerSecond: Int, seconds: Int)? { get }
}

/// Told what an exchange does while it runs: the final head, the byte counters. Only given to
/// the engine when someone listens.
package protocol TransferObserver: Sendable {
    /// The final response head arrived (not a redirect hop the client follows).
    func headReceived(status: Int)
    /// The byte counters changed.
    func progressed(_ progress: TransferProgress)
    /// A connection attempt failed before anything was sent; attempt `attempt` starts after
    /// `delay` (``ConnectRetryPolicy``).
    func connectRetryScheduled(attempt: Int, delay: Duration, error: CurlewError)
}

/// What the engine needs to know about one exchange besides the request.
package struct TransferPlan: Sendable {
    /// Where the body goes.
    package var sink: TransferSinkKind
    /// Who hears the head and progress; `nil` when nobody listens.
    package var observer: (any TransferObserver)?
    /// Whether the client follows redirects: a redirect head with a `Location` is a hop, its body
    /// dropped unread and its head not reported.
    package var followsRedirects: Bool

    package init(sink: TransferSinkKind, observer: (any TransferObserver)?, followsRedirects: Bool) {
        self.sink = sink
        self.observer = observer
        self.followsRedirects = followsRedirects
    }
}
