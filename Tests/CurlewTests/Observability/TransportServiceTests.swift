import Curlew
import Foundation
import LoopbackServer
import ServiceLifecycle
import Synchronization
import Testing
import TestSupport

/// ``TransportService``: graceful shutdown drains in-flight requests, refuses new ones, and fails
/// what outlives the grace period; the engine thread is named.
@Suite("Transport service lifecycle", .timeLimit(.minutes(2)))
struct TransportServiceTests {
    private func slowServer(_ delay: Duration) async throws -> LoopbackServer {
        var router = LoopbackRouter()
        router.on("GET", "/slow") { _, _ in
            try? await Task.sleep(for: delay)
            return .text("finished")
        }
        return try await LoopbackServer.start(router: router)
    }

    @Test func gracefulShutdownLetsAnInFlightRequestFinishAndRefusesNewOnesAtOnce() async throws {
        // The first answer waits for a gate the test opens only after the refused request, so
        // the first request is still draining then however slowly the machine runs.
        let gate = ObservabilityGate()
        let server = try await LoopbackServer.start { request in
            await gate.wait(request)
            return .text("finished")
        }
        let service = TransportService(gracePeriod: .seconds(30))
        let client = APIClient(baseURL: server.baseURL, transport: service)
        let inFlight = Task { try await client.send(Send(path: "slow")) }
        await waitForRequests(server, count: 1)
        #expect(service.inFlight == 1)

        let shutdown = Task { await service.shutdown() }
        _ = await eventually { service.isShuttingDown }
        let refused = try await #require(throws: CurlewError.self) { try await client.send(Send(path: "slow")) }
        #expect(refused.code == .shutdown)
        #expect(refused.serverResponseStatus == .serviceUnavailable)
        #expect(service.inFlight == 1, "a new request fails at once, while the first is still draining")
        #expect(server.requestCount == 1, "the refused request was never sent")

        gate.release()
        #expect(try await inFlight.value == "finished")
        await shutdown.value
        #expect(service.inFlight == 0)
        await server.shutdown()
    }

    @Test func aRequestOutlivingTheGracePeriodFailsWithShutdown() async throws {
        // The answer waits for a gate the test opens only afterwards: the request cannot finish
        // on its own, so `.shutdown` proves the drain stopped waiting (no upper time bound).
        let gate = ObservabilityGate()
        let server = try await LoopbackServer.start { request in
            await gate.wait(request)
            return .text("finished")
        }
        let service = TransportService(gracePeriod: .milliseconds(200))
        let client = APIClient(baseURL: server.baseURL, transport: service)
        let inFlight = Task { try await client.send(Send(path: "slow")) }
        await waitForRequests(server, count: 1)
        let started = ContinuousClock.now
        await service.shutdown()
        let elapsed = ContinuousClock.now - started
        let error = try await #require(throws: CurlewError.self) { try await inFlight.value }
        #expect(error.code == .shutdown)
        #expect(elapsed >= .milliseconds(200), "the grace period was given")
        #expect(service.inFlight == 0)
        gate.release()
        await server.shutdown()
    }

    @Test func inAServiceGroupTheTransportDrainsOnGracefulShutdown() async throws {
        let server = try await slowServer(.milliseconds(500))
        let service = TransportService(gracePeriod: .seconds(10))
        let client = APIClient(baseURL: server.baseURL, transport: service)
        let group = ServiceGroup(configuration: .init(services: [.init(service: service)], logger: .init(label: "test")))
        let running = Task { try await group.run() }
        let inFlight = Task { try await client.send(Send(path: "slow")) }
        await waitForRequests(server, count: 1)
        await group.triggerGracefulShutdown()
        #expect(try await inFlight.value == "finished")
        try await running.value
        let after = try await #require(throws: CurlewError.self) { try await client.send(Send(path: "slow")) }
        #expect(after.code == .shutdown)
        await server.shutdown()
    }

    @Test func theEngineThreadIsNamedCurlewEngine() async throws {
        let transport = CurlTransport()
        try await withLoopback(handler: { _ in .text("ok") }) { _, _, _ in }
        let names = await eventually {
            Self.threadNames().contains("curlew-engine")
        }
        #expect(names)
        await transport.shutdown()
    }

    /// The names of this process's threads (`/proc/self/task/*/comm`).
    static func threadNames() -> [String] {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        return tasks.compactMap { task in
            (try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8))?
                .trimmingCharacters(in: .whitespacesAndNewlines)
        }
    }
}
