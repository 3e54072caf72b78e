import Curlew
import CoreMetrics
import Foundation
import LoopbackServer
import MetricsTestKit
import Synchronization
import Testing
import TestSupport

/// swift-metrics counters and timers, recorded into swift-metrics' `TestMetrics` passed per call.
@Suite("Metrics", .timeLimit(.minutes(2)))
struct MetricsTests {
    struct MeteredQuote: Endpoint {
        typealias Response = String
        var path: String
    }

    @Test func requestsAreCountedByMethodStatusClassAndTypeWithDurationsBytesAndRetries() async throws {
        let metrics = TestMetrics()
        let flaky = FlakyCounter()
        var router = LoopbackRouter()
        router.on("GET", "/ok") { _, _ in .text("fine") }
        router.on("GET", "/missing") { _, _ in .text("no", status: 404) }
        router.on("GET", "/flaky") { _, _ in flaky.next() == 1 ? .text("busy", status: 503) : .text("recovered") }
        try await withLoopback(router: router) { server, _, transport in
            let client = APIClient(
                configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [RetryMiddleware(baseDelay: .milliseconds(1))]),
                transport: transport)
            let measured: (inout RequestOptions) -> Void = { $0.instrumentation = CurlewInstrumentation(metricsFactory: metrics) }
            _ = try await client.send(MeteredQuote(path: "ok"), options: measured)
            _ = try await client.send(MeteredQuote(path: "ok"), options: measured)
            _ = try? await client.send(MeteredQuote(path: "missing"), options: measured)
            _ = try await client.send(MeteredQuote(path: "flaky"), options: measured)
            _ = try await client.send(MeteredQuote(path: "ok"))
        }
        let ok = [("method", "GET"), ("request", "MeteredQuote"), ("status_class", "2xx")]
        let missing = [("method", "GET"), ("request", "MeteredQuote"), ("status_class", "4xx")]
        #expect(metrics.counterTotal(label: "curlew_requests_total", dimensions: ok) == 3)
        #expect(metrics.counterTotal(label: "curlew_requests_total", dimensions: missing) == 1)
        #expect(try metrics.expectTimer("curlew_request_duration_seconds", ok).values.count == 3)
        #expect(try metrics.expectTimer("curlew_request_duration_seconds", missing).values.allSatisfy { $0 > 0 })
        let perType = [("method", "GET"), ("request", "MeteredQuote")]
        #expect(metrics.counterTotal(label: "curlew_attempts_total", dimensions: perType) == 5)
        #expect(metrics.counterTotal(label: "curlew_bytes_received_total", dimensions: perType) > 5 * 4)
        #expect(metrics.counterTotal(label: "curlew_bytes_sent_total", dimensions: perType) > 0)
        #expect(metrics.counterTotal(label: "curlew_retries_total", dimensions: [("request", "MeteredQuote")]) == 1)
    }

    @Test func cacheHitsAndMissesAreCounted() async throws {
        let metrics = TestMetrics()
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
        try await withLoopback(handler: { _ in ServerResponse(status: 200, headers: [("Cache-Control", "max-age=600")], body: Array("cached".utf8)) }) { server, _, transport in
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [cache]), transport: transport)
            for _ in 0..<3 {
                _ = try await client.send(MeteredQuote(path: "c")) {
                    $0.cache = .http
                    $0.instrumentation = CurlewInstrumentation(metricsFactory: metrics)
                }
            }
            #expect(server.requestCount == 1)
        }
        #expect(metrics.counterTotal(label: "curlew_cache_misses_total", dimensions: [("request", "MeteredQuote")]) == 1)
        #expect(metrics.counterTotal(label: "curlew_cache_hits_total", dimensions: [("request", "MeteredQuote")]) == 2)
    }

    @Test func nothingIsRecordedOrInjectedUnlessBootstrappedOrPassed() async throws {
        #expect(MetricsSystem.factory is NOOPMetricsHandler, "this test process never bootstraps swift-metrics")
        try await withLoopback(handler: { _ in .text("plain") }) { server, client, _ in
            _ = try await client.send(MeteredQuote(path: "plain"))
            let seen = try #require(server.requests.first)
            #expect(seen.header("traceparent") == nil)
            #expect(seen.headers.map(\.name).sorted() == seen.headers.map(\.name).sorted().filter { !$0.lowercased().contains("trace") })
        }
    }
}

/// Counts calls from 1.
final class FlakyCounter: Sendable {
    private let value = Mutex(0)
    func next() -> Int {
        value.withLock {
            $0 += 1; return $0
        }
    }
}
