import Curlew
@testable import CurlewFleet
import Foundation
import LoopbackServer
import MetricsTestKit
import Synchronization
import Testing
import TestSupport

@Suite("Fleet-wide queue limits (in-memory store)", .timingSensitive)
struct FleetLimiterTests {
    static func configuration() -> FleetLimiter.Configuration {
        var configuration = FleetLimiter.Configuration()
        configuration.leaseTimeout = .seconds(5)
        return configuration
    }

    /// Sends `count` calls through each client in the "partner" queue at once; returns the answers.
    static func burst(_ clients: [APIClient], count: Int) async throws -> [String] {
        try await withThrowingTaskGroup(of: String.self) { group in
            for client in clients {
                for n in 0..<count {
                    group.addTask { try await client.send(FleetText(path: "slow/\(n % 1)", policy: .networkOnly, queue: "partner")) }
                }
            }
            return try await group.reduce(into: [String]()) { $0.append($1) }
        }
    }

    @Test func threeInstancesNeverPassTheFleetLimit() async throws {
        let server = try await startOrigin(delay: .milliseconds(30))
        let store = InMemoryFleetStore()
        let queues = (0..<3).map { _ in QueueActor() }
        let limiters = try queues.map { try FleetLimiter(queues: $0, store: store, limits: ["partner": 8], configuration: Self.configuration()) }
        let running = limiters.map { limiter in Task { try await limiter.run() } }
        let clients = queues.map { APIClient(configuration: ClientConfiguration(baseURL: server.baseURL), queues: $0) }
        let answers = try await Self.burst(clients, count: 40)
        #expect(answers.count == 120)
        #expect(server.peakInFlight(path: "/slow/0") <= 8)
        #expect(await store.leased("partner") <= 8)
        #expect(limiters.allSatisfy { ($0.status(of: "partner")?.leases ?? 0) > 0 })
        #expect(limiters.allSatisfy { $0.status(of: "partner")?.isFallback == false })
        running.forEach { $0.cancel() }
        for task in running { _ = await task.result }
        await server.shutdown()
    }

    @Test func callsSentBeforeTheLimiterRunsWaitForItsFirstLease() async throws {
        let server = try await startOrigin(delay: .milliseconds(5))
        let store = InMemoryFleetStore()
        let queues = QueueActor()
        let limiter = try FleetLimiter(queues: queues, store: store, limits: ["partner": 8], configuration: Self.configuration())
        let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL), queues: queues)
        let calls = Task { try await Self.burst([client], count: 3) }
        // The limiter exists but does not run yet: its queue is held, so the calls wait there
        // (they used to run one at a time on slots the fleet never granted).
        #expect(await eventually { await queues.status(of: "partner").waiting == 3 })
        #expect(await queues.status(of: "partner").running == 0)
        #expect(server.requestCount == 0)
        let running = Task { try await limiter.run() }
        let answers = try await calls.value
        #expect(answers == ["slow 0", "slow 0", "slow 0"])
        #expect(server.requestCount == 3)
        #expect((limiter.status(of: "partner")?.leases ?? 0) >= 1)
        running.cancel()
        _ = await running.result
        await server.shutdown()
    }

    @Test func slotsOfAHolderThatDiedComeBackWhenItsLeaseRunsOut() async throws {
        let server = try await startOrigin(delay: .milliseconds(5))
        let store = InMemoryFleetStore()
        // A holder that took every slot and then died: it never renews.
        let dead = try await store.lease("partner", capacity: 8, holder: "dead", wanted: 8, inUse: 8, ttl: .milliseconds(300))
        #expect(dead.granted == 8)
        let queues = QueueActor()
        let limiter = try FleetLimiter(queues: queues, store: store, limits: ["partner": 8], configuration: Self.configuration())
        let running = Task { try await limiter.run() }
        let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL), queues: queues)
        // The limiter's first lease, before any call (on a loaded machine it can come after the
        // dead lease ran out; the burst's calls then need another one either way).
        #expect(await eventually { (limiter.status(of: "partner")?.leases ?? 0) >= 1 })
        let answers = try await Self.burst([client], count: 20)
        #expect(answers.count == 20)
        #expect(server.peakInFlight(path: "/slow/0") <= 8)
        // The live instance holds every slot it was given; the dead one holds none.
        #expect((limiter.status(of: "partner")?.leases ?? 0) > 1)
        running.cancel()
        _ = await running.result
        await server.shutdown()
    }

    @Test func anUnreachableStoreFallsBackToALocalShare() async throws {
        let server = try await startOrigin(delay: .milliseconds(5))
        let store = InMemoryFleetStore()
        var configuration = Self.configuration()
        configuration.leaseTimeout = .milliseconds(50)
        configuration.assumedInstances = 4
        let metrics = TestMetrics()
        configuration.metricsFactory = metrics
        await store.setOutage(.failing)
        let queues = QueueActor()
        let limiter = try FleetLimiter(queues: queues, store: store, limits: ["partner": 8], configuration: configuration)
        let running = Task { try await limiter.run() }
        let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL), queues: queues)
        let answers = try await Self.burst([client], count: 20)
        #expect(answers.count == 20)
        let status = try #require(limiter.status(of: "partner"))
        #expect(status.isFallback)
        #expect(status.slots == 2)
        #expect(status.fallbacks == 1)
        #expect(server.peakInFlight(path: "/slow/0") <= 2)
        let queue = [("queue", "partner")]
        #expect(try metrics.expectGauge("curlew_fleet_limit_fallback", queue).lastValue == 1)
        #expect(try metrics.expectGauge("curlew_fleet_limit_slots", queue).lastValue == 2)
        #expect(try metrics.expectCounter("curlew_fleet_limit_fallbacks_total", queue).totalValue == 1)
        #expect(try metrics.expectCounter("curlew_fleet_fail_open", [("what", "limit"), ("queue", "partner")]).totalValue >= 1)
        // The store comes back: leases resume.
        await store.setOutage(.none)
        #expect(await eventually { limiter.status(of: "partner")?.isFallback == false })
        #expect(await eventually { (try? metrics.expectGauge("curlew_fleet_limit_fallback", queue).lastValue) == 0 })
        #expect(try metrics.expectGauge("curlew_fleet_limit_instances", queue).lastValue == 1)
        #expect(try metrics.expectCounter("curlew_fleet_limit_fallbacks_total", queue).totalValue == 1, "one fallback, one recovery")
        running.cancel()
        _ = await running.result
        let leases = try #require(limiter.status(of: "partner")?.leases)
        #expect(try metrics.expectCounter("curlew_fleet_limit_leases_total", queue).totalValue == Int64(leases))
        await server.shutdown()
    }

    /// A store whose lease requests wait until the test ends the outage, counting how many run
    /// at once. `Sendable`: the state is guarded by the mutex.
    final class SlowLeaseStore: FleetStore {
        let inner = InMemoryFleetStore()
        private let counts = Mutex<(running: Int, peak: Int, started: Int, answering: Bool)>((0, 0, 0, false))

        var peakRunning: Int { counts.withLock { $0.peak } }
        var started: Int { counts.withLock { $0.started } }
        /// Lets every request, the waiting ones included, answer.
        func startAnswering() { counts.withLock { $0.answering = true } }

        func read(_ key: String) async throws -> FleetEntry? { try await inner.read(key) }
        func write(_ entry: FleetEntry) async throws { try await inner.write(entry) }
        func invalidate(_ target: FleetInvalidation) async throws { try await inner.invalidate(target) }
        func invalidations() -> AsyncStream<FleetInvalidation> { inner.invalidations() }
        func tryLock(_ key: String, owner: String, ttl: Duration) async throws -> Bool { try await inner.tryLock(key, owner: owner, ttl: ttl) }
        func unlock(_ key: String, owner: String) async throws { try await inner.unlock(key, owner: owner) }

        func lease(_ limit: String, capacity: Int, holder: String, wanted: Int, inUse: Int, ttl: Duration) async throws -> FleetLease {
            counts.withLock {
                $0.running += 1
                $0.started += 1
                $0.peak = max($0.peak, $0.running)
            }
            defer { counts.withLock { $0.running -= 1 } }
            while !counts.withLock({ $0.answering }) { try? await Task.sleep(for: .milliseconds(5)) }
            return try await inner.lease(limit, capacity: capacity, holder: holder, wanted: wanted, inUse: inUse, ttl: ttl)
        }
    }

    @Test func aLeaseRequestThatTimedOutIsNotRepeatedWhileTheStoreStillWorksOnIt() async throws {
        let store = SlowLeaseStore()
        var configuration = Self.configuration()
        configuration.leaseTimeout = .milliseconds(50)
        configuration.retryInterval = .milliseconds(10)
        // Past a lease's lifetime the request is taken for lost: a loaded machine must not reach it.
        configuration.leaseTimeToLive = .seconds(60)
        let queues = QueueActor()
        let limiter = try FleetLimiter(queues: queues, store: store, limits: ["partner": 8], configuration: configuration)
        let running = Task { try await limiter.run() }
        // The first request times out: the limiter falls back, and sends no second request
        // while the store still works on the first (every 10 ms without the rule).
        #expect(await eventually { limiter.status(of: "partner")?.isFallback == true })
        try await Task.sleep(for: .milliseconds(500))
        #expect(store.started == 1)
        // Once it has ended, the next goes out, and is answered.
        store.startAnswering()
        #expect(await eventually { limiter.status(of: "partner")?.isFallback == false })
        #expect(store.started >= 2)
        #expect(store.peakRunning == 1)
        running.cancel()
        _ = await running.result
    }

    @Test func theGrantIsCappedToAFairShareWhileOthersWant() {
        #expect(FleetLeaseRules.grant(capacity: 8, wanted: 8, othersHeld: 0, othersWanting: 0) == 8)
        #expect(FleetLeaseRules.grant(capacity: 8, wanted: 8, othersHeld: 0, othersWanting: 1) == 4)
        #expect(FleetLeaseRules.grant(capacity: 8, wanted: 8, othersHeld: 6, othersWanting: 2) == 2)
        #expect(FleetLeaseRules.grant(capacity: 8, wanted: 3, othersHeld: 0, othersWanting: 2) == 3)
        #expect(FleetLeaseRules.grant(capacity: 8, wanted: 0, othersHeld: 0, othersWanting: 0) == 0)
    }

    /// A caller that sends one call after another keeps its slot between them: no lease round
    /// trip per call (the queue is not held in the gaps), and the slot goes back to the fleet
    /// once no call has wanted it for `idleRelease`.
    @Test func aSlotStaysBetweenCallsAndGoesBackOnceIdle() async throws {
        let store = InMemoryFleetStore()
        let queues = QueueActor()
        var configuration = Self.configuration()
        configuration.leaseTimeToLive = .seconds(600)
        configuration.idleRelease = .seconds(600)
        let limiter = try FleetLimiter(queues: queues, store: store, limits: ["partner": 8], configuration: configuration)
        let running = Task { try await limiter.run() }
        // A first call that runs (or waits) until the limiter has seen it and leased its slot.
        try await queues.run(in: "partner") {
            while limiter.status(of: "partner")?.slots != 1 { try await Task.sleep(for: .milliseconds(5)) }
        }
        let leases = try #require(limiter.status(of: "partner")?.leases)
        // Gaps of 20 ms between calls: four times the limiter's check interval, far below the
        // idle release.
        for _ in 0..<20 {
            try await Task.sleep(for: .milliseconds(20))
            try await queues.run(in: "partner") {}
        }
        #expect(limiter.status(of: "partner")?.leases == leases, "no lease request between calls")
        #expect(limiter.status(of: "partner")?.slots == 1)
        running.cancel()
        _ = await running.result

        // With a short idle release the slot goes back to the store.
        configuration.idleRelease = .milliseconds(50)
        let releasing = try FleetLimiter(queues: queues, store: store, limits: ["partner": 8], configuration: configuration)
        let again = Task { try await releasing.run() }
        try await queues.run(in: "partner") {}
        #expect(await eventually { releasing.status(of: "partner")?.slots == 0 })
        again.cancel()
        _ = await again.result
    }
}
