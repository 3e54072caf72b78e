public import HTTPTypes

/// Publishes the events of one call: it knows the call's ``CallID`` and name, so the code that
/// reports (middleware, the transport, the engine thread) only says what happened.
public struct EventReporter: Sendable {
    /// Where events go; `nil` reports nothing.
    package let broadcaster: EventBroadcaster?
    /// The call.
    public let requestID: CallID
    /// The request type's name.
    public let requestName: String
    /// Counts retries, refreshes and cache hits when metrics are on (``CurlewInstrumentation``).
    var meter: CallMeter?

    /// Creates a reporter for one call.
    package init(broadcaster: EventBroadcaster?, requestID: CallID, requestName: String) {
        self.broadcaster = broadcaster
        self.requestID = requestID
        self.requestName = requestName
    }

    /// A reporter that publishes nothing.
    public static func silent(requestID: CallID = .next(), requestName: String = "") -> EventReporter {
        EventReporter(broadcaster: nil, requestID: requestID, requestName: requestName)
    }

    /// Whether anyone listens. Check it before computing costly facts (progress on every chunk).
    public var isActive: Bool { broadcaster?.hasSubscribers ?? false }

    /// Publishes an event of `kind` for this call; `fill` sets the kind's facts.
    public func report(_ kind: ClientEvent.Kind, _ fill: (inout ClientEvent) -> Void = { _ in }) {
        meter?.observe(kind)
        guard let broadcaster, broadcaster.hasSubscribers else { return }
        var event = ClientEvent(kind, requestID: requestID, requestName: requestName)
        fill(&event)
        broadcaster.publish(event)
    }

    /// Publishes ``ClientEvent/Kind/progress``.
    public func progress(_ progress: TransferProgress) {
        report(.progress) { $0.progress = progress }
    }

    /// Publishes ``ClientEvent/Kind/headReceived``.
    public func headReceived(status: HTTPResponse.Status) {
        report(.headReceived) { $0.status = status }
    }
}

extension EventReporter: TransferObserver {
    /// The engine's head report, as ``ClientEvent/Kind/headReceived``.
    package func headReceived(status: Int) {
        headReceived(status: HTTPResponse.Status(code: status))
    }

    /// The engine's counters, as ``ClientEvent/Kind/progress``.
    package func progressed(_ progress: TransferProgress) {
        self.progress(progress)
    }

    /// The engine's connect retry, as ``ClientEvent/Kind/connectRetryScheduled``.
    package func connectRetryScheduled(attempt: Int, delay: Duration, error: CurlewError) {
        report(.connectRetryScheduled) {
            $0.attempt = attempt
            $0.delay = delay
            $0.error = error
        }
    }
}
