public import HTTPTypes

/// Something that happened to a request, a queue or the client's session, published to every
/// subscriber of ``APIClient/events`` (and, for queue events, of ``QueueActor/events``).
///
/// An event is a value with a ``kind`` and the facts that kind has: a request's events carry its
/// ``requestID`` and ``requestName``; a progress event carries ``progress``; a finished one its
/// ``status``, ``metrics`` and ``source``; a failure its ``error``.
///
/// ``Kind`` is a struct, not an enum, so new kinds (cache hits, mock answers…) never break a
/// `switch` in your code; compare with `==` or switch with a `default`:
///
/// ```swift
/// for await event in client.events {
///     switch event.kind {
///     case .progress: print(event.requestID!, event.progress!.bytesReceived)
///     case .sessionEnded: await logOut()
///     default: break
///     }
/// }
/// ```
public struct ClientEvent: Sendable {
    /// What happened.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        /// The kind's name, e.g. `"finished"`.
        public let name: String

        /// Creates a kind; built-in kinds are the static members.
        public init(_ name: String) { self.name = name }

        /// The call started (before any queue, middleware or transfer).
        public static let started = Kind("started")
        /// The call waits in ``ClientEvent/queue`` for a free slot.
        public static let queued = Kind("queued")
        /// The call left its queue and runs.
        public static let dequeued = Kind("dequeued")
        /// The transport starts attempt ``ClientEvent/attempt`` (1 for the first).
        public static let attempt = Kind("attempt")
        /// A redirect was followed to ``ClientEvent/location``.
        public static let redirected = Kind("redirected")
        /// A retry is scheduled after ``ClientEvent/delay`` because of ``ClientEvent/error``.
        public static let retryScheduled = Kind("retryScheduled")
        /// Connection attempt ``ClientEvent/attempt`` starts after ``ClientEvent/delay``: the
        /// last one failed before anything was sent (``ClientEvent/error``; see
        /// ``/CurlewCore/ConnectRetryPolicy``).
        public static let connectRetryScheduled = Kind("connectRetryScheduled")
        /// The credential was refreshed to version ``ClientEvent/credentialVersion``.
        public static let credentialRefreshed = Kind("credentialRefreshed")
        /// The server ended the session (``ClientEvent/reason``); the credential was cleared.
        public static let sessionEnded = Kind("sessionEnded")
        /// The final response's status line and headers arrived (``ClientEvent/status``).
        public static let headReceived = Kind("headReceived")
        /// Bytes moved (``ClientEvent/progress``).
        public static let progress = Kind("progress")
        /// The call finished with a decoded value (``ClientEvent/status``, ``ClientEvent/source``).
        public static let finished = Kind("finished")
        /// The call failed with ``ClientEvent/error`` (or was cancelled).
        public static let failed = Kind("failed")
        /// Every request of ``ClientEvent/queue`` finished and none waits.
        public static let queueDrained = Kind("queueDrained")
        /// ``ClientEvent/queue`` was held: waiting requests stay waiting.
        public static let queueHeld = Kind("queueHeld")
        /// ``ClientEvent/queue`` was resumed after a hold.
        public static let queueResumed = Kind("queueResumed")
        /// The circuit breaker of ``ClientEvent/origin`` opened: calls there fail fast
        /// (`CircuitBreakerMiddleware`, `CurlewResilience`).
        public static let circuitOpened = Kind("circuitOpened")
        /// The circuit breaker of ``ClientEvent/origin`` lets a probe through.
        public static let circuitHalfOpen = Kind("circuitHalfOpen")
        /// The circuit breaker of ``ClientEvent/origin`` closed again after a successful probe.
        public static let circuitClosed = Kind("circuitClosed")
        /// The adaptive concurrency limit of ``ClientEvent/origin`` moved to ``ClientEvent/limit``
        /// (`AdaptiveConcurrencyMiddleware`, `CurlewResilience`).
        public static let concurrencyLimitChanged = Kind("concurrencyLimitChanged")
        /// A call to ``ClientEvent/origin`` was shed: ``ClientEvent/limit`` calls were in flight
        /// and the line was full; it fails with ``/CurlewCore/CurlewError/Code/concurrencyLimitExceeded`` unsent.
        public static let concurrencyShed = Kind("concurrencyShed")
        /// A hedge of a slow call went out as attempt ``ClientEvent/attempt``
        /// (`HedgingMiddleware`, `CurlewResilience`).
        public static let hedgeSent = Kind("hedgeSent")
        /// The hedge that was attempt ``ClientEvent/attempt`` answered first; the others were
        /// cancelled.
        public static let hedgeWon = Kind("hedgeWon")

        /// The name.
        public var description: String { name }
    }

    /// What happened.
    public var kind: Kind
    /// When it happened.
    public var time: ContinuousClock.Instant
    /// The call it happened to; `nil` for queue and session events.
    public var requestID: CallID?
    /// The request type's name, e.g. `"SearchRequest"`.
    public var requestName: String?
    /// Method and redacted URL of the call.
    public var request: RequestSummary?
    /// The attempt number (``Kind/attempt``, ``Kind/retryScheduled``).
    public var attempt: Int?
    /// The queue (``Kind/queued``, ``Kind/dequeued`` and the queue kinds).
    public var queue: String?
    /// The response status (``Kind/headReceived``, ``Kind/finished``, ``Kind/failed`` when known).
    public var status: HTTPResponse.Status?
    /// Bytes moved so far (``Kind/progress``).
    public var progress: TransferProgress?
    /// libcurl's timings and counters (``Kind/finished``).
    public var metrics: TransferMetrics?
    /// Where the answer came from (``Kind/finished``).
    public var source: ResponseSource?
    /// The failure (``Kind/failed``, ``Kind/retryScheduled``).
    public var error: CurlewError?
    /// The back-off before a retry (``Kind/retryScheduled``), or how long the call waited before
    /// a hedge (``Kind/hedgeSent``).
    public var delay: Duration?
    /// The redirect target (``Kind/redirected``).
    public var location: String?
    /// Why (``Kind/sessionEnded``).
    public var reason: String?
    /// The new credential version (``Kind/credentialRefreshed``).
    public var credentialVersion: Int?
    /// The origin (`scheme://host:port`) of a circuit breaker event (``Kind/circuitOpened``,
    /// ``Kind/circuitHalfOpen``, ``Kind/circuitClosed``) or an adaptive limit event
    /// (``Kind/concurrencyLimitChanged``, ``Kind/concurrencyShed``).
    public var origin: String?
    /// The origin's adaptive concurrency limit (``Kind/concurrencyLimitChanged``,
    /// ``Kind/concurrencyShed``).
    public var limit: Int?

    /// Creates an event of a kind, now, with no facts; set the ones the kind has.
    public init(_ kind: Kind, requestID: CallID? = nil, requestName: String? = nil) {
        self.kind = kind
        self.time = .now
        self.requestID = requestID
        self.requestName = requestName
    }
}

extension ClientEvent: CustomStringConvertible {
    /// One line: kind, request id and name, and the facts that are set.
    public var description: String {
        var text = kind.name
        if let requestID { text += " \(requestID)" }
        if let requestName { text += " \(requestName)" }
        if let queue { text += " queue=\(queue)" }
        if let attempt { text += " attempt=\(attempt)" }
        if let status { text += " status=\(status.code)" }
        if let progress { text += " received=\(progress.bytesReceived)" }
        if let error { text += " error=\(error.code)" }
        if let reason { text += " reason=\(reason)" }
        if let origin { text += " origin=\(origin)" }
        if let limit { text += " limit=\(limit)" }
        return text
    }
}
