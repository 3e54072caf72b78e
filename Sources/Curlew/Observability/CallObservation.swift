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
///
/// A streamed body (``APIClient/stream(_:highWaterMark:options:)``, the `.stream` disposition)
/// keeps its call and attempt open until it ends: the spans end, and the count, duration and
/// bytes are recorded, once, when the last byte arrives, the transfer fails or the reader
/// cancels (``/CurlewCore/ResponseBodyStream/whenEnded(_:)``).
/// A class (immutable), so that the `Optional` every call holds — `nil` unless something
/// observes — is one word, not a struct copied and destroyed through value witnesses.
final class CallObservation: Sendable {
    let tracer: (any Tracer)?
    let meter: CallMeter?
    let requestName: String

    /// The observation of the call running in this task, for its attempts.
    @TaskLocal static var current: CallObservation?

    /// The call's observation, `nil` when neither a tracer nor a metrics factory is active.
    ///
    /// A factory rather than a failable initializer: a class's `init?` allocates the object
    /// before it can fail, and every unobserved call paid for that allocation and its release.
    static func make(options: RequestOptions, request: PreparedRequest, name: String) -> CallObservation? {
        let instrumentation = options.instrumentation
        let tracer = instrumentation.activeTracer
        let factory = instrumentation.activeMetricsFactory
        guard tracer != nil || factory != nil else { return nil }
        return CallObservation(tracer: tracer, meter: factory.map { CallMeter(factory: $0, method: request.method.rawValue, request: name) }, requestName: name)
    }

    private init(tracer: (any Tracer)?, meter: CallMeter?, requestName: String) {
        self.tracer = tracer
        self.meter = meter
        self.requestName = requestName
    }

    /// Runs the call's chain and decoding (`body` returns the raw response and the output) in the
    /// call span, then records the call's count, duration and outcome — when a streamed body
    /// ends, for a stream.
    nonisolated(nonsending) static func run<Output>(
        _ observation: CallObservation?, _ request: PreparedRequest,
        _ body: nonisolated(nonsending) () async throws -> (RawResponse, Output)
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
            if case .stream(let stream) = raw.content {
                // Only the status is captured: the stream itself would keep its buffer alive.
                let status = raw.status
                stream.whenEnded { end in
                    observation.finishCall(span, started: started, status: status, metrics: end.metrics, error: end.error)
                }
            } else {
                observation.finishCall(span, started: started, status: raw.status, metrics: raw.metrics, error: nil)
            }
            return result
        } catch {
            let curlew = error as? CurlewError
            observation.finishCall(span, started: started, status: curlew?.status, metrics: curlew?.metrics, error: error)
            throw error
        }
    }

    /// Ends the call span and records the call's count and duration.
    private func finishCall(
        _ span: (any Span)?, started: ContinuousClock.Instant, status: HTTPResponse.Status?, metrics: TransferMetrics?, error: (any Error)?
    ) {
        span.map { HTTPSpanAttributes.finish($0, status: status, metrics: metrics, error: error) }
        // A body that failed after its head counts as the failure, as a collected one does.
        meter?.recordCall(
            statusClass: CallMeter.statusClass(error == nil ? status : (error as? CurlewError)?.status, error: error),
            duration: ContinuousClock.now - started)
        span?.end()
    }

    /// One attempt on the transport: a child span whose context is injected into the request's
    /// headers, and the attempt's count and bytes — when a streamed body ends, for a stream.
    nonisolated(nonsending) static func attempt(
        _ request: PreparedRequest, attempt: Int, _ send: nonisolated(nonsending) (PreparedRequest) async throws -> RawResponse
    ) async throws -> RawResponse {
        guard let observation = current else { return try await send(request) }
        guard let tracer = observation.tracer else {
            do {
                let raw = try await send(request)
                observation.finishAttempt(nil, raw)
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
            observation.finishAttempt(span, raw)
            return raw
        } catch {
            let curlew = error as? CurlewError
            HTTPSpanAttributes.finish(span, status: curlew?.status, metrics: curlew?.metrics, error: error)
            observation.meter?.recordAttempt(curlew?.metrics)
            span.end()
            throw error
        }
    }

    /// Ends an attempt that got a response: now, or when its streamed body ends.
    private func finishAttempt(_ span: (any Span)?, _ raw: RawResponse) {
        let status = raw.status
        guard case .stream(let stream) = raw.content else {
            span.map { HTTPSpanAttributes.finish($0, status: status, metrics: raw.metrics, error: nil) }
            meter?.recordAttempt(raw.metrics)
            span?.end()
            return
        }
        let meter = meter
        stream.whenEnded { end in
            span.map { HTTPSpanAttributes.finish($0, status: status, metrics: end.metrics, error: end.error) }
            meter?.recordAttempt(end.metrics)
            span?.end()
        }
    }
}
