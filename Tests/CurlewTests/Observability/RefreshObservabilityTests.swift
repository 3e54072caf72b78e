import Curlew
import CoreMetrics
import Foundation
import InMemoryTracing
import LoopbackServer
import MetricsTestKit
import Testing
import TestSupport
import Tracing

/// A credential refresh in metrics and tracing: one counter increment with its outcome and one
/// span per refresh, however many calls wait for it, the span a child of the call that started it.
@Suite("Token refresh observability", .timeLimit(.minutes(2)))
struct RefreshObservabilityTests {
    @Test func fiftyCallsWaitingForOneRefreshMakeOneCountAndOneSpanUnderTheCallThatStartedIt() async throws {
        let auth = AuthServerState()
        auth.state.withLock { $0.holdsRefresh = true }
        let tracer = InMemoryTracer()
        let metrics = TestMetrics()
        try await withLoopback(handler: { await auth.handle($0) }) { server, _, transport in
            let client = TokenRefreshTests().makeClient(server, transport, store: TokenStore(credential: .init(accessToken: "T1", refreshToken: "R1")))
            let instrumented: @Sendable (inout RequestOptions) -> Void = {
                $0.instrumentation = CurlewInstrumentation(tracer: tracer, metricsFactory: metrics)
            }
            let answers = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<50 {
                    group.addTask {
                        try await tracer.withSpan("incoming \(index)", ofKind: .server) { _ in
                            try await client.send(Secure(), options: instrumented)
                        }
                    }
                }
                // Every call has had its 401 and the one refresh is held at the server.
                await waitForRequests(server, count: 51)
                auth.state.withLock { $0.holdsRefresh = false }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers == Array(repeating: "hello T2", count: 50))
            #expect(auth.refreshCalls == 1)
        }
        let spans = tracer.finishedSpans
        let refreshes = spans.filter { $0.operationName == "credential refresh" }
        #expect(refreshes.count == 1)
        let refresh = try #require(refreshes.first)
        let calls = spans.filter { $0.operationName == "Secure" }
        #expect(calls.count == 50)
        #expect(spans.filter { $0.operationName == "GET" }.count == 100, "two attempts per call")
        let starter = try #require(calls.first { $0.spanID == refresh.parentSpanID }, "the refresh span's parent is a call span")
        #expect(refresh.traceID == starter.traceID)
        let incoming = try #require(spans.first { $0.spanID == starter.parentSpanID })
        #expect(incoming.operationName.hasPrefix("incoming "))
        #expect(refresh.kind == .client)
        #expect(refresh.status == nil)
        #expect(refresh.attributes["curlew.request.name"]?.toSpanAttribute() == "Secure")

        #expect(metrics.counterTotal(label: "curlew_credential_refreshes_total") == 1)
        #expect(metrics.counterTotal(label: "curlew_credential_refreshes_total", dimensions: [("request", "Secure"), ("outcome", "success")]) == 1)
        #expect(metrics.counterTotal(label: "curlew_requests_total", dimensions: [("status_class", "2xx")]) == 50)
    }

    @Test func aFailedRefreshIsCountedAsAFailureAndItsSpanIsAnError() async throws {
        let auth = AuthServerState()
        auth.state.withLock { $0.refreshFailure = 500 }
        let tracer = InMemoryTracer()
        let metrics = TestMetrics()
        try await withLoopback(handler: { await auth.handle($0) }) { server, _, transport in
            let client = TokenRefreshTests().makeClient(server, transport, store: TokenStore(credential: .init(accessToken: "T1", refreshToken: "R1")))
            let error = try await #require(throws: CurlewError.self) {
                try await client.send(Secure()) { $0.instrumentation = CurlewInstrumentation(tracer: tracer, metricsFactory: metrics) }
            }
            #expect(error.code == .refreshFailed)
        }
        let spans = tracer.finishedSpans
        let refresh = try #require(spans.first { $0.operationName == "credential refresh" })
        #expect(spans.filter { $0.operationName == "credential refresh" }.count == 1)
        let call = try #require(spans.first { $0.operationName == "Secure" })
        #expect(refresh.parentSpanID == call.spanID)
        #expect(refresh.status?.code == .error)
        #expect(refresh.errors.count == 1)
        #expect(metrics.counterTotal(label: "curlew_credential_refreshes_total", dimensions: [("outcome", "failure")]) == 1)
        #expect(metrics.counterTotal(label: "curlew_credential_refreshes_total", dimensions: [("outcome", "success")]) == 0)
    }
}
