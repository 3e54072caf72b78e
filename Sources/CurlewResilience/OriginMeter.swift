internal import CoreMetrics
internal import Curlew

/// The per-origin instruments of the circuit breaker and the adaptive limiter, recorded into the
/// metrics factory of the call that moved them (nothing when it has none).
enum OriginMeter {
    /// The breaker of `origin` is now `state`: 0 closed, 1 half-open, 2 open.
    /// With a breaker per endpoint type, `endpointType` adds the dimension `request`.
    static func recordBreaker(_ state: CircuitBreakerMiddleware.State, origin: String, endpointType: String?, options: RequestOptions) {
        guard let factory = options.instrumentation.activeMetricsFactory else { return }
        let value: Int
        switch state {
        case .closed: value = 0
        case .halfOpen: value = 1
        case .open: value = 2
        }
        var dimensions = [("origin", origin)]
        if let endpointType { dimensions.append(("request", endpointType)) }
        Gauge(label: "curlew_circuit_state", dimensions: dimensions, factory: factory).record(value)
    }

    /// The limiter of `origin` now allows `limit` calls and has `inFlight` out.
    static func recordLimit(_ limit: Int, inFlight: Int, origin: String, options: RequestOptions) {
        guard let factory = options.instrumentation.activeMetricsFactory else { return }
        Gauge(label: "curlew_concurrency_limit", dimensions: [("origin", origin)], factory: factory).record(limit)
        Gauge(label: "curlew_concurrency_in_flight", dimensions: [("origin", origin)], factory: factory).record(inFlight)
    }

    /// A call to `origin` was shed.
    static func recordShed(origin: String, options: RequestOptions) {
        guard let factory = options.instrumentation.activeMetricsFactory else { return }
        Counter(label: "curlew_concurrency_shed_total", dimensions: [("origin", origin)], factory: factory).increment()
    }
}

extension Duration {
    /// The duration in whole nanoseconds (the latency windows' unit).
    var wholeNanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
