@testable import Curlew
@testable import CurlewCore
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// A transport with several engines against the loopback server: how exchanges spread, stay on
/// the caller's engine, respect connection caps, and end at shutdown.
@Suite("Several engines")
struct EngineGroupTests {
    /// Holds responses until the test opens it, so every exchange is in flight at once.
    final class Gate: Sendable {
        private let open = Mutex(false)
        func release() { open.withLock { $0 = true } }
        var isOpen: Bool { open.withLock { $0 } }

        /// A handler that answers the number of `/n/<number>` once the gate is open.
        var numberEcho: @Sendable (ServerRequest) async -> ServerResponse {
            { request in
                while !self.isOpen, !request.connection.isClosed { try? await Task.sleep(for: .milliseconds(5)) }
                return await ConnectionTests.numberEcho(request)
            }
        }
    }

    /// Per-engine counters of `transport`: exchanges chosen for each engine, transfers on each now.
    private func perEngine(_ transport: CurlTransport) -> (started: [Int], active: [Int]) {
        (transport.engines.exchangesStarted, transport.engines.engines.map(\.statistics.activeTransfers))
    }

    @Test func concurrentRequestsSpreadEvenlyOverTwoEngines() async throws {
        let gate = Gate()
        try await withLoopback(transportConfiguration: .init(engineCount: 2), handler: gate.numberEcho) { server, client, transport in
            #expect(transport.engineCount == 2)
            let tasks = (0..<40).map { index in Task { try await client.send(Numbered(index: index)) } }
            await waitForRequests(server, count: 40)
            // Every exchange is in flight: each engine carries half, on connections of its own.
            #expect(perEngine(transport).started == [20, 20])
            #expect(perEngine(transport).active == [20, 20])
            gate.release()
            for (index, task) in tasks.enumerated() {
                let answer = try await task.value
                #expect(answer == String(index))
            }
            #expect(server.requestCount == 40)
            #expect(server.connectionsAccepted == 40)
            #expect(server.peakOpenConnections == 40)
            #expect(await eventually { perEngine(transport).active == [0, 0] })
            #expect(transport.engines.exchangesStarted == [20, 20])
        }
    }

    @Test func sequentialRequestsStayOnOneEngineAndOneConnection() async throws {
        try await withLoopback(transportConfiguration: .init(engineCount: 2), handler: ConnectionTests.numberEcho) { server, client, transport in
            for index in 0..<30 {
                let answer = try await client.send(Numbered(index: index))
                #expect(answer == String(index))
            }
            #expect(transport.engines.exchangesStarted == [30, 0])
            #expect(server.connectionsAccepted == 1)
        }
    }

    @Test func aTaskOnAnEnginesExecutorSendsOnThatEngine() async throws {
        try await withLoopback(transportConfiguration: .init(engineCount: 2), handler: ConnectionTests.numberEcho) { server, client, transport in
            let engines = transport.engines.engines
            // The public executor hands out the engines in turn.
            #expect(
                (0..<4).map { _ in transport.executor as? CurlEngine }.map { $0.map(ObjectIdentifier.init) }
                    == [engines[0], engines[1], engines[0], engines[1]].map(ObjectIdentifier.init))
            for (engine, expected) in [(1, [0, 10]), (0, [10, 10]), (1, [10, 20])] {
                let onItsThread = try await Task(executorPreference: engines[engine]) { () -> Bool in
                    var onItsThread = true
                    for index in 0..<10 {
                        let answer = try await client.send(Numbered(index: index))
                        #expect(answer == String(index))
                        onItsThread = onItsThread && engines[engine].isEngineThread
                    }
                    return onItsThread
                }.value
                #expect(onItsThread)
                #expect(transport.engines.exchangesStarted == expected)
            }
            #expect(server.requestCount == 30)
            #expect(server.connectionsAccepted == 2, "one connection per engine, reused by its task")
        }
    }

    @Test func aTaskKeepsItsEngineWhileTheOtherIsIdle() async throws {
        let gate = Gate()
        try await withLoopback(transportConfiguration: .init(engineCount: 2), handler: gate.numberEcho) { server, client, transport in
            let engine = transport.engines.engines[1]
            let task = Task(executorPreference: engine) {
                try await withThrowingTaskGroup(of: String.self) { group in
                    for index in 0..<6 { group.addTask { try await client.send(Numbered(index: index)) } }
                    return try await group.reduce(into: Set<String>()) { $0.insert($1) }
                }
            }
            await waitForRequests(server, count: 6)
            #expect(perEngine(transport).active == [0, 6], "child tasks inherit the preference: affinity over balance")
            gate.release()
            let answer = try await task.value
            #expect(answer == Set((0..<6).map(String.init)))
            #expect(transport.engines.exchangesStarted == [0, 6])
        }
    }

    /// A cap with two engines: (per-host cap, total cap, the cap that must hold).
    static let caps: [(perHost: Int?, total: Int?, cap: Int)] = [(1, nil, 1), (2, nil, 2), (3, nil, 3), (nil, 3, 3), (4, 3, 3)]

    @Test(arguments: caps)
    func connectionCapsHoldForTheWholeTransport(perHost: Int?, total: Int?, cap: Int) async throws {
        let gate = Gate()
        let configuration = CurlTransport.Configuration(maximumConnectionsPerHost: perHost, maximumTotalConnections: total, engineCount: 2)
        try await withLoopback(transportConfiguration: configuration, handler: gate.numberEcho) { server, client, transport in
            let tasks = (0..<40).map { index in Task { try await client.send(Numbered(index: index)) } }
            // Every transfer is attached to a multi handle or waits in Curlew's per-host queue;
            // only `cap` of them reached the server, each on a connection of its own, all busy.
            #expect(await eventually { transport.statistics.activeTransfers + transport.statistics.queuedTransfers == 40 })
            await waitForRequests(server, count: cap)
            #expect(server.openConnections == cap)
            #expect(server.requestCount == cap)
            gate.release()
            for (index, task) in tasks.enumerated() {
                let answer = try await task.value
                #expect(answer == String(index))
            }
            #expect(server.requestCount == 40)
            if total == nil {
                #expect(server.peakOpenConnections == cap)
                #expect(server.connectionsAccepted == cap, "the capped connections are reused, never replaced")
            } else {
                // At a full total cap libcurl closes the oldest idle connection for a transfer to
                // another destination, and the engine's housekeeping sweep is one (it runs after a
                // second without a new transfer, as on a loaded machine while the gate holds).
                // The replacement opens after libcurl closed the old one, but the server may see
                // the close a moment later: only the busy moment above is exact.
                #expect(server.connectionsAccepted >= cap)
            }
            let started = transport.engines.exchangesStarted
            #expect(started.reduce(0, +) == 40)
            if perHost == 1 {
                // A per-host cap below the engine count: the host lives on its window's engine.
                let window = HostWindow.forHost(of: server.baseURL, size: 1, engines: 2)
                #expect(started[window.start] == 40)
            } else {
                #expect(started == [20, 20])
            }
        }
    }

    @Test func shutdownFailsInFlightCallsOnEveryEngineAndFreesThem() async throws {
        let server = try await LoopbackServer.start(handler: FailureTests.hold)
        weak var weakTransport: CurlTransport?
        weak var firstEngine: CurlEngine?
        weak var secondEngine: CurlEngine?
        do {
            let transport = CurlTransport(configuration: .init(engineCount: 2))
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL), transport: transport)
            let engines = transport.engines.engines
            (weakTransport, firstEngine, secondEngine) = (transport, engines[0], engines[1])
            let tasks = (0..<10).map { index in Task { try await client.send(Numbered(index: index)) } }
            await waitForRequests(server, count: 10)
            #expect(engines.map(\.statistics.activeTransfers) == [5, 5])

            await transport.shutdown()
            for task in tasks {
                let result = await task.result
                if case .failure(let error as CurlewError) = result {
                    #expect(error.code == .shutdown)
                } else {
                    Issue.record("expected a shutdown error, got \(result)")
                }
            }
            #expect(engines.map(\.statistics.activeTransfers) == [0, 0])
            for engine in engines {
                #expect(engine.inbox.withLock { if case .stopped = $0.phase { true } else { false } }, "every engine thread has exited")
            }
            let after = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 99)) }
            #expect(after?.code == .shutdown)
            #expect(await eventually { server.openConnections == 0 })
        }
        // Nothing keeps the engines alive once the transport is gone.
        #expect(weakTransport == nil)
        #expect(firstEngine == nil)
        #expect(secondEngine == nil)
        await server.shutdown()
    }

    @Test func droppingATransportStopsAndFreesEveryEngine() async throws {
        let server = try await LoopbackServer.start(handler: ConnectionTests.numberEcho)
        weak var firstEngine: CurlEngine?
        weak var secondEngine: CurlEngine?
        do {
            let transport = CurlTransport(configuration: .init(engineCount: 2))
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL), transport: transport)
            firstEngine = transport.engines.engines[0]
            secondEngine = transport.engines.engines[1]
            let answer = try await client.send(Numbered(index: 7))
            #expect(answer == "7")
        }
        // Each engine thread holds its engine until it has cleaned up and exited.
        #expect(await eventually { firstEngine == nil && secondEngine == nil })
        #expect(await eventually { server.openConnections == 0 })
        await server.shutdown()
    }
}
