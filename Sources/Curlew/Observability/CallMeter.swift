internal import CoreMetrics
internal import HTTPTypes

/// The swift-metrics instruments of one call (only made when a factory is bootstrapped or passed
/// in ``CurlewInstrumentation``). Every label starts with `curlew_`; dimensions are low-cardinality:
/// `method`, `request` (the endpoint type's name) and `status_class` (`2xx`…`5xx`, or `error`
/// when no response arrived, `cancelled`).
///
/// | Label | Kind | Dimensions |
/// | --- | --- | --- |
/// | `curlew_requests_total` | counter | method, request, status_class |
/// | `curlew_request_duration_seconds` | timer | method, request, status_class |
/// | `curlew_attempts_total` | counter | method, request |
/// | `curlew_bytes_sent_total`, `curlew_bytes_received_total` | counter | method, request |
/// | `curlew_retries_total` | counter | request |
/// | `curlew_credential_refreshes_total` | counter | request, outcome (`success`, `failure`) |
/// | `curlew_cache_hits_total`, `curlew_cache_misses_total` | counter | request |
/// | `curlew_hedges_total`, `curlew_hedges_won_total`, `curlew_circuit_opened_total` | counter | request |
/// | `curlew_circuit_state` | gauge: 0 closed, 1 half-open, 2 open | origin |
/// | `curlew_concurrency_limit`, `curlew_concurrency_in_flight` | gauge | origin |
/// | `curlew_concurrency_shed_total` | counter | origin |
/// | `curlew_connections_open`, `curlew_connections_idle` | gauge | — |
/// | `curlew_transfers_in_flight`, `curlew_transfers_queued_for_connection` | gauge | — |
/// | `curlew_connect_retries_total` | counter | — |
///
/// The per-origin instruments are recorded by the `CurlewResilience` product's
/// `CircuitBreakerMiddleware` and `AdaptiveConcurrencyMiddleware` into the factory of the call that
/// changed them (its `OriginMeter`); the connection instruments by a running
/// ``TransportService``, once a second (``ConnectionMeter``).
///
/// A class (immutable): a call's ``EventReporter`` carries an optional meter, and an optional
/// reference is one word that copies with a retain, where an optional struct of an existential
/// and two strings was copied and destroyed through its value witnesses on every copy of the
/// reporter, meter or not.
final class CallMeter: Sendable {
    let factory: any MetricsFactory
    let method: String
    let request: String

    init(factory: any MetricsFactory, method: String, request: String) {
        self.factory = factory
        self.method = method
        self.request = request
    }

    /// The status class of an outcome.
    static func statusClass(_ status: HTTPResponse.Status?, error: (any Error)?) -> String {
        if let status { return "\(status.code / 100)xx" }
        if error is CancellationError { return "cancelled" }
        return "error"
    }

    /// One finished call: its count and duration.
    func recordCall(statusClass: String, duration: Duration) {
        let dimensions = [("method", method), ("request", request), ("status_class", statusClass)]
        Counter(label: "curlew_requests_total", dimensions: dimensions, factory: factory).increment()
        Timer(label: "curlew_request_duration_seconds", dimensions: dimensions, factory: factory)
            .recordNanoseconds(Self.nanoseconds(duration))
    }

    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }

    /// One attempt on the transport: its count and the bytes libcurl moved.
    func recordAttempt(_ metrics: TransferMetrics?) {
        let dimensions = [("method", method), ("request", request)]
        Counter(label: "curlew_attempts_total", dimensions: dimensions, factory: factory).increment()
        guard let metrics else { return }
        Counter(label: "curlew_bytes_sent_total", dimensions: dimensions, factory: factory).increment(by: Int(metrics.bytesSent))
        Counter(label: "curlew_bytes_received_total", dimensions: dimensions, factory: factory).increment(by: Int(metrics.bytesReceived))
    }

    /// One credential refresh this call started (waiters on it record nothing), `request` being
    /// the type of the call that started it.
    func recordRefresh(succeeded: Bool) {
        let dimensions = [("request", request), ("outcome", succeeded ? "success" : "failure")]
        Counter(label: "curlew_credential_refreshes_total", dimensions: dimensions, factory: factory).increment()
    }

    /// Counts the events that matter for metrics: retries, cache hits and misses, hedges sent and
    /// won, circuit breakers opened (refreshes are
    /// counted with their outcome by ``recordRefresh(succeeded:)``).
    func observe(_ kind: ClientEvent.Kind) {
        let label: String
        switch kind {
        case .retryScheduled: label = "curlew_retries_total"
        case .cacheHit: label = "curlew_cache_hits_total"
        case .cacheMiss: label = "curlew_cache_misses_total"
        case .hedgeSent: label = "curlew_hedges_total"
        case .hedgeWon: label = "curlew_hedges_won_total"
        case .circuitOpened: label = "curlew_circuit_opened_total"
        default: return
        }
        Counter(label: label, dimensions: [("request", request)], factory: factory).increment()
    }
}

/// A transport's connections as gauges, recorded by a running ``TransportService``.
struct ConnectionMeter {
    private let open: Gauge
    private let idle: Gauge
    private let inFlight: Gauge
    private let queued: Gauge
    private let retries: Counter
    /// The retries already counted (the statistics count since the transport started).
    private var retriesRecorded = 0

    init(factory: any MetricsFactory) {
        open = Gauge(label: "curlew_connections_open", factory: factory)
        idle = Gauge(label: "curlew_connections_idle", factory: factory)
        inFlight = Gauge(label: "curlew_transfers_in_flight", factory: factory)
        queued = Gauge(label: "curlew_transfers_queued_for_connection", factory: factory)
        retries = Counter(label: "curlew_connect_retries_total", factory: factory)
    }

    /// Records `statistics`; the retries counter grows by the retries since the last record.
    mutating func record(_ statistics: ConnectionStatistics) {
        open.record(statistics.openConnections)
        idle.record(statistics.idleConnections)
        inFlight.record(statistics.transfersInFlight)
        queued.record(statistics.queuedForConnection)
        if statistics.connectRetries > retriesRecorded {
            retries.increment(by: statistics.connectRetries - retriesRecorded)
            retriesRecorded = statistics.connectRetries
        }
    }
}
