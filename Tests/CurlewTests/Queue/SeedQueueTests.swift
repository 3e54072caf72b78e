import Curlew
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

struct SeedPath: Endpoint {
    typealias Response = String
    var path: String
}

@Suite("Seeds: holds, scheduler, shared queues")
struct SeedQueueTests {
    /// `/slow` answers once `/open` was requested; everything else at once.
    final class Gate: Sendable {
        let opened = SeedTally()
        /// How many `/slow…` answers the handler has returned.
        let slowAnswered = SeedTally()
        /// Each `/later/…` request's arrival, with the `/slow…` answers returned before it.
        let laterArrivals = SeedLog<Int>()
    }

    func handler(_ gate: Gate) -> @Sendable (ServerRequest) async -> ServerResponse {
        { request in
            if request.path == "/open" { gate.opened.increment() }
            if request.path.hasPrefix("/later/") { gate.laterArrivals.append(gate.slowAnswered.count) }
            if request.path.hasPrefix("/slow") {
                while gate.opened.count == 0, !request.connection.isClosed { try? await Task.sleep(for: .milliseconds(5)) }
                defer { gate.slowAnswered.increment() }
                if request.path.hasSuffix("/fail") { return .text("no", status: 500) }
                return .text(request.path)
            }
            if request.path.hasSuffix("/fail") { return .text("no", status: 500) }
            return .text(request.path)
        }
    }

    func client(_ server: LoopbackServer, _ transport: CurlTransport, _ middleware: [any APIMiddleware], queues: QueueActor = QueueActor()) -> APIClient {
        APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: middleware), transport: transport, queues: queues)
    }

    @Test func laterRequestsWaitForTheHoldingRequestThenStart() async throws {
        let gate = Gate()
        try await withLoopback(handler: handler(gate)) { server, _, transport in
            let holds = RequestHolds()
            let client = client(server, transport, [holds])
            let events = client.events
            let login = Task { try await client.send(SeedPath(path: "slow/login")) { $0.holdsLaterRequests = RequestHold(tag: "login") } }
            #expect(await eventually { server.inFlight(path: "/slow/login") == 1 })
            let later = (1...3).map { index in Task { try await client.send(SeedPath(path: "later/\(index)")) } }
            #expect(await eventually { holds.heldCount("login") == 3 })
            let bypass = try await client.send(SeedPath(path: "health")) { $0.ignoresHolds = true }
            #expect(bypass == "/health")
            #expect(server.requests(path: "/later/1").isEmpty, "held while the login runs")
            _ = try await client.send(SeedPath(path: "open")) { $0.ignoresHolds = true }
            let value1 = try await login.value
            #expect(value1 == "/slow/login")
            for task in later { _ = try await task.value }
            #expect(holds.activeTags.isEmpty)
            // Every held call reached the server only after the login's answer had been sent.
            #expect(gate.laterArrivals.all == [1, 1, 1])
            let held = await seedCollect(events, kinds: [.requestHeld], until: .requestHeld, count: 3)
            #expect(held.map(\.reason) == Array(repeating: "held by login", count: 3))
        }
    }

    @Test func aFailedHoldingRequestCancelsTheHeldOnesWithOnSuccess() async throws {
        let gate = Gate()
        try await withLoopback(handler: handler(gate)) { server, _, transport in
            let holds = RequestHolds()
            let client = client(server, transport, [holds])
            let login = Task {
                try await client.send(SeedPath(path: "slow/fail")) { $0.holdsLaterRequests = RequestHold(tag: "login", release: .onSuccess) }
            }
            #expect(await eventually { server.inFlight(path: "/slow/fail") == 1 })
            let later = Task { try await client.send(SeedPath(path: "later/1")) }
            #expect(await eventually { holds.heldCount("login") == 1 })
            _ = try await client.send(SeedPath(path: "open")) { $0.ignoresHolds = true }
            _ = await #expect(throws: CurlewError.self) { try await login.value }
            await #expect(throws: CancellationError.self) { try await later.value }
            #expect(server.requests(path: "/later/1").isEmpty)
        }
    }

    @Test func aSuccessfulHoldingRequestReleasesTheHeldOnesWithOnSuccess() async throws {
        let gate = Gate()
        try await withLoopback(handler: handler(gate)) { server, _, transport in
            let holds = RequestHolds()
            let client = client(server, transport, [holds])
            let login = Task {
                try await client.send(SeedPath(path: "slow/login")) { $0.holdsLaterRequests = RequestHold(tag: "login", release: .onSuccess) }
            }
            #expect(await eventually { server.inFlight(path: "/slow/login") == 1 })
            let later = (1...2).map { index in Task { try await client.send(SeedPath(path: "later/\(index)")) } }
            #expect(await eventually { holds.heldCount("login") == 2 })
            #expect(gate.laterArrivals.all.isEmpty, "held while the login runs")
            _ = try await client.send(SeedPath(path: "open")) { $0.ignoresHolds = true }
            let loginValue = try await login.value
            #expect(loginValue == "/slow/login")
            var values: [String] = []
            for task in later { values.append(try await task.value) }
            #expect(values == ["/later/1", "/later/2"])
            #expect(gate.laterArrivals.all == [1, 1])
            #expect(holds.activeTags.isEmpty)
        }
    }

    @Test func aManualHoldWaitsForReleaseOrCancel() async throws {
        try await withLoopback(handler: handler(Gate())) { server, _, transport in
            let holds = RequestHolds()
            let client = client(server, transport, [holds])
            _ = try await client.send(SeedPath(path: "login")) { $0.holdsLaterRequests = RequestHold(tag: "login", release: .manually) }
            #expect(holds.activeTags == ["login"])
            let first = Task { try await client.send(SeedPath(path: "later/1")) }
            #expect(await eventually { holds.heldCount("login") == 1 })
            holds.release("login")
            let value2 = try await first.value
            #expect(value2 == "/later/1")

            _ = try await client.send(SeedPath(path: "login")) { $0.holdsLaterRequests = RequestHold(tag: "login", release: .manually) }
            let second = Task { try await client.send(SeedPath(path: "later/2")) }
            #expect(await eventually { holds.heldCount("login") == 1 })
            holds.cancel("login")
            await #expect(throws: CancellationError.self) { try await second.value }
            #expect(server.requests(path: "/later/2").isEmpty)
            #expect(server.requests(path: "/login").count == 2)
        }
    }

    @Test func aCancelledHeldCallLeavesWithoutBeingSent() async throws {
        try await withLoopback(handler: handler(Gate())) { server, _, transport in
            let holds = RequestHolds()
            let client = client(server, transport, [holds])
            _ = try await client.send(SeedPath(path: "login")) { $0.holdsLaterRequests = RequestHold(tag: "login", release: .manually) }
            let held = Task { try await client.send(SeedPath(path: "later/1")) }
            #expect(await eventually { holds.heldCount("login") == 1 })
            held.cancel()
            await #expect(throws: CancellationError.self) { try await held.value }
            #expect(holds.heldCount("login") == 0)
            holds.release("login")
            #expect(server.requests(path: "/later/1").isEmpty)
        }
    }

    @Test func priorityOrdersCallsOutsideNamedQueues() async throws {
        let gate = Gate()
        try await withLoopback(handler: handler(gate)) { server, _, transport in
            let queues = QueueActor(limits: ["all": 1])
            let client = APIClient(
                configuration: ClientConfiguration(baseURL: server.baseURL, defaultQueue: "all"), transport: transport, queues: queues)
            let blocker = Task { try await client.send(SeedPath(path: "slow/first")) }
            #expect(await eventually { server.inFlight(path: "/slow/first") == 1 })
            let low = Task { try await client.send(SeedPath(path: "low")) { $0.priority = .low } }
            #expect(await eventually { await queues.status(of: "all").waiting == 1 })
            let high = Task { try await client.send(SeedPath(path: "high")) { $0.priority = .high } }
            #expect(await eventually { await queues.status(of: "all").waiting == 2 })
            // A call in a named queue of its own is not held by the default queue's slots.
            let value3 = try await client.send(SeedPath(path: "named"), queue: "own")
            #expect(value3 == "/named")
            _ = try await client.send(SeedPath(path: "open"), queue: "own")
            _ = try await blocker.value
            _ = try await low.value
            _ = try await high.value
            let order = server.requests.map(\.path).filter { ["/low", "/high"].contains($0) }
            #expect(order == ["/high", "/low"])
            #expect(server.peakInFlight(path: "/low") == 1)
        }
    }

    @Test func theSharedQueueActorLimitsAcrossClients() async throws {
        let gate = Gate()
        try await withLoopback(handler: handler(gate)) { server, _, transport in
            let name = "seed.images.\(UUID().uuidString)"
            await QueueActor.shared.setLimit(1, for: name)
            let one = client(server, transport, [], queues: .shared)
            let two = client(server, transport, [], queues: .shared)
            let first = Task { try await one.send(SeedPath(path: "slow/a"), queue: name) }
            #expect(await eventually { server.inFlight(path: "/slow/a") == 1 })
            let second = Task { try await two.send(SeedPath(path: "slow/b"), queue: name) }
            #expect(await eventually { await QueueActor.shared.status(of: name).waiting == 1 })
            #expect(server.requests(path: "/slow/b").isEmpty)
            _ = try await one.send(SeedPath(path: "open"))
            let value4 = try await first.value
            #expect(value4 == "/slow/a")
            let value5 = try await second.value
            #expect(value5 == "/slow/b")
        }
    }
}
