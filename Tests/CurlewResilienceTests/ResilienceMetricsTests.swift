import Curlew
import CurlewResilience
import Foundation
import HTTPTypes
import LoopbackServer
import MetricsTestKit
import Testing
import TestSupport

/// The resilience middleware's swift-metrics counters, recorded into swift-metrics' `TestMetrics`
/// passed per call (the client's own: CurlewTests' `MetricsTests`).
@Suite("Resilience metrics", .timeLimit(.minutes(2)))
struct ResilienceMetricsTests {
    struct MeteredQuote: Endpoint {
        typealias Response = String
        var path: String
    }

    /// A hedge that wins and a circuit breaker that opens are counted once each.
    @Test func hedgesAndOpenedBreakersAreCounted() async throws {
        let metrics = TestMetrics()
        var router = LoopbackRouter()
        router.on("GET", "/hedged") { request, _ in
            // The first attempt waits for its disconnect; the hedge answers. Told apart by the
            // attempt's tag, not by arrival order: on a loaded machine the hedge can arrive first.
            guard request.header("X-Attempt") == "1" else { return .text("hedge") }
            await request.connection.closed()
            return .text("too late")
        }
        router.on("GET", "/down") { _, _ in .text("down", status: 503) }
        try await withLoopback(router: router) { server, _, transport in
            let middleware: [any APIMiddleware] = [
                HedgingMiddleware(delay: .milliseconds(20), burst: 1), AttemptTag(),
                CircuitBreakerMiddleware(policy: .init(failureRatio: 0.6, minimumThroughput: 2, breakDuration: .seconds(60))),  // the hedged success counts too
            ]
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: middleware), transport: transport)
            let measured: (inout RequestOptions) -> Void = { $0.instrumentation = CurlewInstrumentation(metricsFactory: metrics) }
            let answer = try await client.send(MeteredQuote(path: "hedged"), options: measured)
            #expect(answer == "hedge")
            for _ in 0..<3 { _ = try? await client.send(MeteredQuote(path: "down"), options: measured) }
            #expect(server.requests(path: "/down").count == 2)
        }
        let perType = [("request", "MeteredQuote")]
        #expect(metrics.counterTotal(label: "curlew_hedges_total", dimensions: perType) == 1)
        #expect(metrics.counterTotal(label: "curlew_hedges_won_total", dimensions: perType) == 1)
        #expect(metrics.counterTotal(label: "curlew_circuit_opened_total", dimensions: perType) == 1)
    }
}

/// Tags each attempt with its number (`X-Attempt`), inside the hedging middleware, so the test
/// server can tell the first attempt from its hedge.
struct AttemptTag: APIMiddleware {
    var phase: MiddlewarePhase? { .retry }

    func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        var request = request
        if let name = HTTPField.Name("X-Attempt") { request.headers.append(HTTPField(name: name, value: String(context.attempt))) }
        return try await next(request, context)
    }
}
