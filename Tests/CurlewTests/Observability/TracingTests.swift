import Curlew
import Foundation
import InMemoryTracing
import LoopbackServer
import Testing
import TestSupport
import Tracing

/// An in-memory tracer whose propagation writes a W3C `traceparent` (as swift-otel's propagator
/// does) from the in-memory span ids, so the loopback server can see what Curlew injected.
struct W3CInMemoryTracer: Tracer {
    let base = InMemoryTracer()

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind,
        at instant: @autoclosure () -> Instant, function: String, file fileID: String, line: UInt
    ) -> InMemorySpan {
        base.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject)
    where Inject.Carrier == Carrier {
        guard let span = context.inMemorySpanContext else { return }
        injector.inject("00-\(Self.hex(span.traceID, 32))-\(Self.hex(span.spanID, 16))-01", forKey: "traceparent", into: &carrier)
    }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract)
    where Extract.Carrier == Carrier {}

    /// The incrementing ids ("trace-1", "span-2"…) as zero-padded lower-case hex.
    static func hex(_ id: String, _ width: Int) -> String {
        let digits = String(UInt64(id.filter(\.isNumber)) ?? 0, radix: 16)
        return String(repeating: "0", count: width - digits.count) + digits
    }
}

@Suite("Tracing", .timeLimit(.minutes(2)))
struct TracingTests {
    struct TracedQuote: Endpoint {
        typealias Response = String
        var path: String { "quote" }
        var query: [URLQueryItem] { [URLQueryItem(name: "api_key", value: "secret-1"), URLQueryItem(name: "symbol", value: "ACME")] }
    }

    @Test func aCallSpanAndAnAttemptSpanNestUnderTheCallersSpanAndTheServerSeesTraceparent() async throws {
        let tracer = W3CInMemoryTracer()
        try await withLoopback(handler: { _ in .text("42") }) { server, client, _ in
            try await tracer.withSpan("incoming request", ofKind: .server) { _ in
                _ = try await client.send(TracedQuote()) { $0.instrumentation = CurlewInstrumentation(tracer: tracer) }
            }
            let spans = tracer.base.finishedSpans
            let incoming = try #require(spans.first { $0.operationName == "incoming request" })
            let call = try #require(spans.first { $0.operationName == "TracedQuote" })
            let attempt = try #require(spans.first { $0.operationName == "GET" })
            #expect(spans.count == 3)
            #expect(call.parentSpanID == incoming.spanID)
            #expect(attempt.parentSpanID == call.spanID)
            #expect(call.traceID == incoming.traceID && attempt.traceID == incoming.traceID)
            #expect(call.kind == .client && attempt.kind == .client)

            let url = "\(server.baseURL)/quote?api_key=<redacted>&symbol=ACME"
            for span in [call, attempt] {
                #expect(span.attributes["http.request.method"]?.toSpanAttribute() == "GET")
                #expect(span.attributes["url.full"]?.toSpanAttribute() == .string(url))
                #expect(span.attributes["server.address"]?.toSpanAttribute() == "127.0.0.1")
                #expect(span.attributes["server.port"]?.toSpanAttribute() == .int(Int64(server.port)))
                #expect(span.attributes["http.response.status_code"]?.toSpanAttribute() == 200)
                #expect(span.attributes["network.protocol.version"]?.toSpanAttribute() == "1.1")
                #expect(span.status == nil)
            }
            #expect(attempt.attributes["curlew.attempt"]?.toSpanAttribute() == 1)
            #expect(attempt.attributes["http.request.resend_count"] == nil)

            let seen = try #require(server.requests.first)
            let expected = "00-\(W3CInMemoryTracer.hex(attempt.traceID, 32))-\(W3CInMemoryTracer.hex(attempt.spanID, 16))-01"
            #expect(seen.header("traceparent") == expected)
            #expect(expected != "00-00000000000000000000000000000000-0000000000000000-01")
        }
    }

    @Test func eachRetryIsItsOwnAttemptSpanAndFailuresMarkTheSpans() async throws {
        let tracer = W3CInMemoryTracer()
        let counter = FlakyCounter()
        try await withLoopback(handler: { _ in counter.next() == 1 ? .text("busy", status: 503) : .text("gone", status: 404) }) { server, _, transport in
            let client = APIClient(
                configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [RetryMiddleware(baseDelay: .milliseconds(1))]),
                transport: transport)
            _ = try? await client.send(TracedQuote()) { $0.instrumentation = CurlewInstrumentation(tracer: tracer) }
            let spans = tracer.base.finishedSpans
            let call = try #require(spans.first { $0.operationName == "TracedQuote" })
            let attempts = spans.filter { $0.operationName == "GET" }
            #expect(call.parentSpanID == nil)
            #expect(attempts.count == 2)
            #expect(attempts.allSatisfy { $0.parentSpanID == call.spanID })
            #expect(attempts.map { $0.attributes["http.response.status_code"]?.toSpanAttribute() } == [503, 404])
            #expect(attempts.last?.attributes["http.request.resend_count"]?.toSpanAttribute() == 1)
            #expect(call.attributes["error.type"]?.toSpanAttribute() == "404")
            #expect(call.status?.code == .error)
            let seen = server.requests.map { $0.header("traceparent") }
            #expect(seen.count == 2)
            #expect(seen[0] != seen[1], "each attempt propagates its own span")
        }
    }
}
