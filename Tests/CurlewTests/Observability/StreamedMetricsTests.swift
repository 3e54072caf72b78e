import Curlew
import CoreMetrics
import Foundation
import InMemoryTracing
import LoopbackServer
import MetricsTestKit
import Testing
import TestSupport
import Tracing

/// swift-metrics for streamed bodies and downloads: recorded once, when the body ends (finished,
/// failed or cancelled by its reader), with the whole exchange's bytes and duration.
@Suite("Metrics of streamed bodies", .timeLimit(.minutes(2)))
struct StreamedMetricsTests {
    struct Feed: Endpoint {
        typealias Response = Data
        var path: String { "feed" }
    }

    struct Broken: Endpoint {
        typealias Response = Data
        var path: String { "broken" }
    }

    static let ok = [("method", "GET"), ("request", "Feed"), ("status_class", "2xx")]
    static let perType = [("method", "GET"), ("request", "Feed")]

    @Test func aStreamedResponseIsRecordedOnceWhenItsBodyEndsWithTheWholeExchangesBytes() async throws {
        let metrics = TestMetrics()
        let gate = ObservabilityGate()
        try await withLoopback(handler: { gate.gatedBody($0) }) { _, client, _ in
            let response = try await client.stream(Feed()) { $0.instrumentation = CurlewInstrumentation(metricsFactory: metrics) }
            var iterator = response.value.makeAsyncIterator()
            var received = try #require(try await iterator.next())
            let headAt = ContinuousClock.now
            // Head and first bytes are in: nothing is recorded yet.
            #expect(metrics.counterTotal(label: "curlew_requests_total") == 0)
            #expect(metrics.counterTotal(label: "curlew_attempts_total") == 0)
            #expect(metrics.counterTotal(label: "curlew_bytes_received_total") == 0)
            #expect(response.value.metrics == nil)

            // A lower bound only: the call cannot end before the gate opens.
            try await Task.sleep(for: .milliseconds(50))
            let releasedAt = ContinuousClock.now
            gate.release()
            while let chunk = try await iterator.next() { received.append(chunk) }
            #expect(received.count == 2000)

            let measured = try #require(response.value.metrics)
            #expect(metrics.counterTotal(label: "curlew_requests_total", dimensions: Self.ok) == 1)
            #expect(metrics.counterTotal(label: "curlew_requests_total") == 1)
            #expect(metrics.counterTotal(label: "curlew_attempts_total", dimensions: Self.perType) == 1)
            #expect(metrics.counterTotal(label: "curlew_bytes_received_total", dimensions: Self.perType) == measured.bytesReceived)
            #expect(metrics.counterTotal(label: "curlew_bytes_sent_total", dimensions: Self.perType) == measured.bytesSent)
            let durations = try metrics.expectTimer("curlew_request_duration_seconds", Self.ok).values
            #expect(durations.count == 1)
            #expect(try #require(durations.first) >= CallDurations.nanoseconds(releasedAt - headAt))

            // The same exchange collected: the same bytes on the wire, headers included.
            let collected = try await client.response(for: Feed())
            #expect(collected.body.count == 2000)
            let collectedBytes = try #require(collected.metrics?.bytesReceived)
            #expect(measured.bytesReceived == collectedBytes)
            #expect(measured.bytesReceived > 2000)
        }
        #expect(metrics.counterTotal(label: "curlew_requests_total") == 1, "recorded once, not again when the stream goes")
    }

    @Test func aStreamedCallsSpansEndWithItsBody() async throws {
        let tracer = InMemoryTracer()
        let gate = ObservabilityGate()
        try await withLoopback(handler: { gate.gatedBody($0) }) { _, client, _ in
            let response = try await client.stream(Feed()) { $0.instrumentation = CurlewInstrumentation(tracer: tracer) }
            var iterator = response.value.makeAsyncIterator()
            #expect(try await iterator.next()?.count == 1000)
            #expect(tracer.finishedSpans.isEmpty, "head received, body still arriving: no span has ended")
            #expect(tracer.activeSpans.count == 2)
            gate.release()
            while try await iterator.next() != nil {}
            let spans = tracer.finishedSpans
            #expect(spans.map(\.operationName).sorted() == ["Feed", "GET"])
            let call = try #require(spans.first { $0.operationName == "Feed" })
            let attempt = try #require(spans.first { $0.operationName == "GET" })
            #expect(attempt.parentSpanID == call.spanID)
            for span in spans {
                #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
                #expect(span.attributes["network.protocol.version"]?.toSpanAttribute() == "1.1")
                #expect(span.status == nil)
            }
        }
    }

    @Test func aStreamCancelledByItsReaderOrFailingMidwayIsRecordedOnceAsSuch() async throws {
        let metrics = TestMetrics()
        let gate = ObservabilityGate()
        var router = LoopbackRouter()
        router.on("GET", "/feed") { request, _ in gate.gatedBody(request) }
        router.on("GET", "/broken") { _, _ in
            // Promises 2,000 bytes, sends 1,000 and closes the connection.
            .stream(headers: [("Content-Length", "2000")]) { writer in
                try await writer.write(Array(repeating: UInt8(ascii: "x"), count: 1000))
                throw CancellationError()
            }
        }
        try await withLoopback(router: router) { _, client, _ in
            let measured: (inout RequestOptions) -> Void = { $0.instrumentation = CurlewInstrumentation(metricsFactory: metrics) }
            let cancelled = try await client.stream(Feed(), options: measured)
            var iterator = cancelled.value.makeAsyncIterator()
            #expect(try await iterator.next()?.count == 1000)
            cancelled.value.cancel()
            cancelled.value.cancel()
            // Recorded once the engine has stopped the transfer, with what libcurl measured then.
            let end = await withCheckedContinuation { continuation in cancelled.value.whenEnded { continuation.resume(returning: $0) } }
            let cancelledBytes = try #require(end.metrics?.bytesReceived)
            #expect(cancelledBytes > 1000, "the 1,000 body bytes that arrived, headers included")
            #expect(metrics.counterTotal(label: "curlew_bytes_received_total", dimensions: Self.perType) == cancelledBytes)
            let cancelledClass = [("request", "Feed"), ("status_class", "cancelled")]
            #expect(metrics.counterTotal(label: "curlew_requests_total", dimensions: cancelledClass) == 1)
            #expect(try metrics.expectTimer("curlew_request_duration_seconds", [("method", "GET")] + cancelledClass).values.count == 1)
            #expect(metrics.counterTotal(label: "curlew_attempts_total", dimensions: Self.perType) == 1)

            let broken = try await client.stream(Broken(), options: measured)
            await #expect(throws: CurlewError.self) { _ = try await broken.value.collect(upTo: 1 << 20) }
            let failedClass = [("request", "Broken"), ("status_class", "error")]
            #expect(metrics.counterTotal(label: "curlew_requests_total", dimensions: failedClass) == 1)
            #expect(metrics.counterTotal(label: "curlew_attempts_total", dimensions: [("request", "Broken")]) == 1)
            #expect(
                metrics.counterTotal(label: "curlew_bytes_received_total", dimensions: [("request", "Broken")]) > 1000,
                "the bytes that arrived before the failure, headers included")
            gate.release()
        }
        #expect(metrics.counterTotal(label: "curlew_requests_total") == 2)
        #expect(metrics.counterTotal(label: "curlew_requests_total", dimensions: [("status_class", "2xx")]) == 0)
    }

    @Test func aDownloadIsRecordedOnceWhenItsFileIsCompleteWithItsBytes() async throws {
        let metrics = TestMetrics()
        let gate = ObservabilityGate()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-metrics-\(UUID().uuidString)/")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withLoopback(handler: { gate.gatedBody($0) }) { server, client, _ in
            let download = Task {
                try await client.download(Feed(), to: folder.appendingPathComponent("feed.bin")) {
                    $0.instrumentation = CurlewInstrumentation(metricsFactory: metrics)
                }
            }
            await waitForRequests(server, count: 1)
            #expect(metrics.counterTotal(label: "curlew_requests_total") == 0)
            gate.release()
            let file = try await download.value
            #expect(file.length == 2000)
            #expect(metrics.counterTotal(label: "curlew_requests_total", dimensions: Self.ok) == 1)
            #expect(metrics.counterTotal(label: "curlew_attempts_total", dimensions: Self.perType) == 1)
            // The same exchange collected (not measured): the same bytes on the wire.
            let collected = try #require(try await client.response(for: Feed()).metrics)
            #expect(metrics.counterTotal(label: "curlew_bytes_received_total", dimensions: Self.perType) == collected.bytesReceived)
            #expect(collected.bytesReceived > 2000)
            #expect(try metrics.expectTimer("curlew_request_duration_seconds", Self.ok).values.count == 1)
        }
        #expect(metrics.counterTotal(label: "curlew_requests_total") == 1)
    }
}

/// Durations as swift-metrics timers hold them.
enum CallDurations {
    static func nanoseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
