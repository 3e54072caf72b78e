@testable import Curlew
import Foundation
import LoopbackServer
import ServiceLifecycle
import Synchronization
import Testing
import TestSupport
import UnixSignals
#if canImport(Glibc)
    import Glibc
#endif

/// An app service as an HTTP server runs one: on graceful shutdown it stops taking requests and
/// waits for the one it is still handling, which makes an upstream call.
private final class HandlerService: Service {
    let client: APIClient
    let handled = Mutex<Result<String, CurlewError>?>(nil)

    init(client: APIClient) { self.client = client }

    func run() async throws {
        // The request the server is handling when shutdown begins.
        let handling = Task {
            do {
                let answer = try await client.send(Send(path: "hung"))
                handled.withLock { $0 = .success(answer) }
            } catch let error as CurlewError {
                handled.withLock { $0 = .failure(error) }
            } catch {
                handled.withLock { $0 = .failure(CurlewError(code: .transportFailure, message: "\(error)")) }
            }
        }
        try? await gracefulShutdown()
        // Like Hummingbird: finish the requests in flight before returning.
        await handling.value
    }
}

/// The drain's bound (issue 31, item 4): once the drain begins, every call has the rest of the
/// grace period as its deadline, so a hung upstream call cannot keep the process alive.
@Suite("Drain bound", .timeLimit(.minutes(2)))
struct DrainBoundTests {
    /// A server that never answers until the test ends (the gate opens only at the end).
    private func hungServer(_ gate: ObservabilityGate) async throws -> LoopbackServer {
        try await LoopbackServer.start { request in
            await gate.wait(request)
            return .text("finished")
        }
    }

    @Test func aHungCallInFlightEndsWhenTheGracePeriodEnds() async throws {
        let gate = ObservabilityGate()
        let server = try await hungServer(gate)
        let service = TransportService(gracePeriod: .milliseconds(300))
        let client = APIClient(baseURL: server.baseURL, transport: service)
        // Without the drain this call would run into its 60 s total timeout.
        let inFlight = Task { try await client.send(Send(path: "hung")) }
        await waitForRequests(server, count: 1)
        service.beginDrain()
        #expect(service.isDraining)
        #expect(!service.isShuttingDown, "calls are still accepted while draining")
        let error = try await #require(throws: CurlewError.self) { try await inFlight.value }
        #expect(error.code == .shutdown)
        #expect(error.message.contains("grace period"))
        // A call started after the deadline ends at once, with the same reason; nothing is sent.
        let late = try await #require(throws: CurlewError.self) { try await client.send(Send(path: "hung")) }
        #expect(late.code == .shutdown)
        #expect(late.message.contains("grace period"))
        #expect(server.requestCount == 1)
        #expect(service.transport.statistics.drainedTransfers == 2)
        await service.shutdown()
        gate.release()
        await server.shutdown()
    }

    @Test func shutdownUsesWhatIsLeftOfTheGraceNotAFreshOne() async throws {
        let gate = ObservabilityGate()
        let server = try await hungServer(gate)
        let service = TransportService(gracePeriod: .milliseconds(300))
        let client = APIClient(baseURL: server.baseURL, transport: service)
        let inFlight = Task { try await client.send(Send(path: "hung")) }
        await waitForRequests(server, count: 1)
        service.beginDrain()
        let error = try await #require(throws: CurlewError.self) { try await inFlight.value }
        #expect(error.code == .shutdown)
        // The grace period is over: the service's own shutdown has nothing to wait for.
        await service.shutdown()
        #expect(service.inFlight == 0)
        gate.release()
        await server.shutdown()
    }

    @Test func aSignalBeginsTheDrainSoTheServerListedAfterTheTransportCanFinish() async throws {
        let gate = ObservabilityGate()
        let server = try await hungServer(gate)
        let upstream = TransportService(gracePeriod: .milliseconds(500), drainSignals: [.sigusr2])
        let client = APIClient(baseURL: server.baseURL, transport: upstream)
        let app = HandlerService(client: client)
        // The order a service author uses: the transport first, so it stops after the server.
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: upstream), .init(service: app)],
                gracefulShutdownSignals: [.sigusr2], logger: .init(label: "test")))
        let running = Task { try await group.run() }
        await waitForRequests(server, count: 1)
        // The platform's signal: the group stops the app first and waits for its handler, whose
        // upstream call hangs; the transport saw the signal too and bounds that call.
        // Both the group and the transport must watch the signal before it is sent (unwatched,
        // SIGUSR2 would end the test process); the group registers before it starts services.
        try #require(await eventually { upstream.isWatchingDrainSignals })
        #expect(!upstream.isDraining)
        kill(getpid(), SIGUSR2)
        try await running.value
        let handled = app.handled.withLock { $0 }
        guard case .failure(let error)? = handled else {
            Issue.record("the handler's upstream call should have failed, got \(String(describing: handled))")
            return
        }
        #expect(error.code == .shutdown)
        #expect(error.message.contains("grace period"))
        #expect(upstream.transport.statistics.drainedTransfers == 1)
        gate.release()
        await server.shutdown()
    }
}
