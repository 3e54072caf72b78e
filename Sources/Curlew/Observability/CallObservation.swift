internal import Foundation
internal import HTTPTypes
internal import Tracing

/// Spans and metrics around one call and each of its attempts; `nil` (no work at all) when
/// neither a tracer nor a metrics factory is active (``CurlewInstrumentation``).
///
/// The call span (kind `client`, named after the endpoint type) covers the middleware chain and
/// decoding; each attempt on the transport is a child span named after the method, as
/// OpenTelemetry's HTTP client conventions describe a physical request, and its context is
/// injected into the outgoing headers (`traceparent` with a W3C propagator such as swift-otel's).
struct CallObservation: Sendable {
    let tracer: (any Tracer)?
    let meter: CallMeter?
    let requestName: String

    /// The observation of the call running in this task, for its attempts.
    @TaskLocal static var current: CallObservation?

    init?(options: RequestOptions, request: PreparedRequest, name: String) {
        let instrumentation = options.instrumentation
        let tracer = instrumentation.activeTracer
        let factory = instrumentation.activeMetricsFactory
        guard tracer != nil || factory != nil else { return nil }
        self.tracer = tracer
        self.meter = factory.map { CallMeter(factory: $0, method: request.method.rawValue, request: name) }
        self.requestName = name
    }

    /// Runs the call's chain and decoding (`body` returns the raw response and the output) in the
    /// call span, then records the call's count, duration and outcome.
    static func run<Output>(
        _ observation: CallObservation?, _ request: PreparedRequest,
        _ body: () async throws -> (RawResponse, Output)
    ) async throws -> (RawResponse, Output) {
        guard let observation else { return try await body() }
        let started = ContinuousClock.now
        let span = observation.tracer?.startSpan(observation.requestName, context: ServiceContext.current ?? .topLevel, ofKind: .client)
        span?.updateAttributes { HTTPSpanAttributes.request(request, into: &$0) }
        span?.attributes["curlew.request.name"] = observation.requestName
        do {
            let result = try await ServiceContext.$current.withValue(span?.context ?? ServiceContext.current) {
                try await $current.withValue(observation) { try await body() }
            }
            let raw = result.0
            span.map { HTTPSpanAttributes.finish($0, status: raw.status, metrics: raw.metrics, error: nil) }
            observation.meter?.recordCall(statusClass: CallMeter.statusClass(raw.status, error: nil), duration: ContinuousClock.now - started)
            span?.end()
            return result
        } catch {
            let curlew = error as? CurlewError
            span.map { HTTPSpanAttributes.finish($0, status: curlew?.status, metrics: curlew?.metrics, error: error) }
            observation.meter?.recordCall(statusClass: CallMeter.statusClass(curlew?.status, error: error), duration: ContinuousClock.now - started)
            span?.end()
            throw error
        }
    }

    /// One attempt on the transport: a child span whose context is injected into the request's
    /// headers, and the attempt's count and bytes.
    static func attempt(
        _ request: PreparedRequest, attempt: Int, _ send: (PreparedRequest) async throws -> RawResponse
    ) async throws -> RawResponse {
        guard let observation = current else { return try await send(request) }
        guard let tracer = observation.tracer else {
            do {
                let raw = try await send(request)
                observation.meter?.recordAttempt(raw.metrics)
                return raw
            } catch {
                observation.meter?.recordAttempt((error as? CurlewError)?.metrics)
                throw error
            }
        }
        let span = tracer.startSpan(request.method.rawValue, context: ServiceContext.current ?? .topLevel, ofKind: .client)
        span.updateAttributes { attributes in
            HTTPSpanAttributes.request(request, into: &attributes)
            attributes["curlew.attempt"] = attempt
            if attempt > 1 { attributes["http.request.resend_count"] = attempt - 1 }
        }
        var outgoing = request
        tracer.inject(span.context, into: &outgoing.headers, using: HTTPFieldsInjector())
        do {
            let raw = try await ServiceContext.$current.withValue(span.context) { try await send(outgoing) }
            HTTPSpanAttributes.finish(span, status: raw.status, metrics: raw.metrics, error: nil)
            observation.meter?.recordAttempt(raw.metrics)
            span.end()
            return raw
        } catch {
            let curlew = error as? CurlewError
            HTTPSpanAttributes.finish(span, status: curlew?.status, metrics: curlew?.metrics, error: error)
            observation.meter?.recordAttempt(curlew?.metrics)
            span.end()
            throw error
        }
    }
}
