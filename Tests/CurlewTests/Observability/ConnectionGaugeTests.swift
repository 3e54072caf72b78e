@testable import Curlew
import LoopbackServer
import MetricsTestKit
import ServiceLifecycle
import Testing
import TestSupport

/// A running transport service records its connections as gauges, also while no call is made
/// (issue 31, item 1: the idle-connection count in metrics).
@Suite("Connection gauges", .timingSensitive)
struct ConnectionGaugeTests {
    @Test func theIdleGaugeFallsToZeroAfterTheIdleTimeoutWithNoCallMade() async throws {
        let server = try await LoopbackServer.start { _ in .text("ok") }
        let metrics = TestMetrics()
        let service = TransportService(
            configuration: .init(engineCount: 1, idleConnectionTimeout: .seconds(8)),
            instrumentation: CurlewInstrumentation(metricsFactory: metrics))
        let group = ServiceGroup(configuration: .init(services: [.init(service: service)], logger: .init(label: "test")))
        let running = Task { try await group.run() }
        let client = APIClient(baseURL: server.baseURL, transport: service)
        let answers = try await withThrowingTaskGroup(of: String.self) { calls in
            for _ in 0..<3 { calls.addTask { try await client.send(Send(path: "a")) } }
            return try await calls.reduce(into: []) { $0.append($1) }
        }
        #expect(answers == ["ok", "ok", "ok"])
        let opened = server.connectionsAccepted
        #expect(opened >= 1)
        // The calls' connections are recorded idle, then closed by the idle timeout: the gauges
        // follow with no further call. (The engine counts idle connections and the service
        // samples the gauge about once a second each; the 8 s idle timeout leaves a loaded
        // machine several samples of the idle connections before they close, and any idle
        // count up to theirs will do.)
        #expect(await eventually { (try? metrics.expectGauge("curlew_connections_idle").values.contains { $0 >= 1 && $0 <= Double(opened) }) == true })
        #expect(await eventually { (try? metrics.expectGauge("curlew_connections_open").lastValue) == 0 })
        #expect(await eventually { (try? metrics.expectGauge("curlew_connections_idle").lastValue) == 0 })
        #expect(try metrics.expectGauge("curlew_transfers_in_flight").lastValue == 0)
        #expect(try metrics.expectGauge("curlew_transfers_queued_for_connection").lastValue == 0)
        #expect(await eventually { server.openConnections == 0 })
        await group.triggerGracefulShutdown()
        try await running.value
        await server.shutdown()
    }

    @Test func connectRetriesAreCountedOnce() async throws {
        let upstream = try ClosedPort()
        let metrics = TestMetrics()
        let policy = ConnectRetryPolicy(maximumAttempts: 3, initialDelay: .milliseconds(1), maximumDelay: .milliseconds(5))
        let service = TransportService(
            configuration: .init(engineCount: 1, connectRetry: policy), instrumentation: CurlewInstrumentation(metricsFactory: metrics))
        let group = ServiceGroup(configuration: .init(services: [.init(service: service)], logger: .init(label: "test")))
        let running = Task { try await group.run() }
        let client = APIClient(baseURL: upstream.baseURL, transport: service)
        for index in 0..<2 {
            let error = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: index)) }
            #expect(error?.code == .cannotConnect)
        }
        #expect(service.transport.connectionStatistics.connectRetries == 4)
        #expect(await eventually { (try? metrics.expectCounter("curlew_connect_retries_total").totalValue) == 4 })
        await group.triggerGracefulShutdown()
        try await running.value
        #expect(try metrics.expectCounter("curlew_connect_retries_total").totalValue == 4)
    }
}
