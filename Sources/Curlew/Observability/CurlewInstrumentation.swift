public import CoreMetrics
public import Tracing

/// Where a call's spans and metrics go (``RequestOptions/instrumentation``).
///
/// By default a call uses the process-wide systems: the tracer given to
/// `InstrumentationSystem.bootstrap(_:)` and the factory given to `MetricsSystem.bootstrap(_:)`.
/// Neither is bootstrapped by default, and then Curlew records nothing and adds no header: no
/// span, no counter, no `traceparent`. A test or a component can pass its own tracer or factory
/// instead (an `InMemoryTracer`, swift-metrics' `TestMetrics`).
public struct CurlewInstrumentation: Sendable {
    /// The tracer; `nil` means `InstrumentationSystem.tracer`.
    public var tracer: (any Tracer)?
    /// The metrics factory; `nil` means `MetricsSystem.factory`.
    public var metricsFactory: (any MetricsFactory)?

    /// Uses the given tracer and factory (`nil`: the process-wide one).
    public init(tracer: (any Tracer)? = nil, metricsFactory: (any MetricsFactory)? = nil) {
        self.tracer = tracer
        self.metricsFactory = metricsFactory
    }

    /// The process-wide systems (the default).
    public static let system = CurlewInstrumentation()
    /// Records nothing, whatever is bootstrapped.
    public static let disabled = CurlewInstrumentation(tracer: NoOpTracer(), metricsFactory: NOOPMetricsHandler.instance)

    /// The tracer to use, `nil` when it is a no-op.
    ///
    /// Every call asks, so the no-op checks compare dynamic types (two loads and a compare)
    /// rather than casting (`is`, a runtime cast through the conformance tables). The no-op types
    /// are a struct and a final class: no subclass could pass for them.
    package var activeTracer: (any Tracer)? {
        if let tracer { return type(of: tracer) == NoOpTracer.self ? nil : tracer }
        // Nothing bootstrapped or bound with `withTracer` (the usual case): one look-up and a
        // type comparison, without `InstrumentationSystem.tracer`'s protocol casts.
        if type(of: InstrumentationSystem.instrument) == NoOpInstrument.self { return nil }
        let tracer = InstrumentationSystem.tracer
        return type(of: tracer) == NoOpTracer.self ? nil : tracer
    }

    /// The factory to use, `nil` when it is a no-op (`package`: the resilience middleware record
    /// their per-origin instruments into it).
    package var activeMetricsFactory: (any MetricsFactory)? {
        let factory = metricsFactory ?? MetricsSystem.factory
        return type(of: factory) == NOOPMetricsHandler.self ? nil : factory
    }
}

/// The instrumentation option (``RequestOptions/instrumentation``).
enum InstrumentationOptionKey: RequestOptionKey {
    static let defaultValue = CurlewInstrumentation.system
}

extension RequestOptions {
    /// Where this call's spans and metrics go. Default: ``CurlewInstrumentation/system``, the
    /// process-wide tracer and metrics factory (no-ops until the application bootstraps them).
    public var instrumentation: CurlewInstrumentation {
        get { self[InstrumentationOptionKey.self] }
        set { self[InstrumentationOptionKey.self] = newValue }
    }
}
