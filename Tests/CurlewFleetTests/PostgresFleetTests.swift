import Curlew
@testable import CurlewFleet
import Foundation
import LoopbackServer
import PostgresNIO
import TestSupport
import Testing

/// A running ``PostgresFleetStore`` in a schema of its own (so tests do not see each other's
/// rows), on the PostgreSQL that scripts/postgres.sh started (CURLEW_POSTGRES_URL).
struct RunningStore {
    let store: PostgresFleetStore
    let task: Task<Void, any Error>

    static func url() throws -> String {
        try #require(TestServers.environment["CURLEW_POSTGRES_URL"], "PostgreSQL is started by scripts/test-servers.sh, or by the first test that asks (TestServers)")
    }

    static func start(schema: String, url: String? = nil) async throws -> RunningStore {
        let configuration = try PostgresFleetStore.Configuration(url: try url ?? Self.url(), schema: schema)
        let store = PostgresFleetStore(configuration: configuration)
        let task = Task { try await store.run() }
        // Nothing is asked before the client runs and the backplane listens: postgres-nio warns
        // about leases before `run()`, and a lease that early was seen to hang (see the report).
        if url == nil { await store.waitUntilListening() }
        return RunningStore(store: store, task: task)
    }

    func stop() async {
        task.cancel()
        _ = await task.result
    }

    static func schema() -> String { "curlew_test_" + UUID().uuidString.prefix(8).lowercased() }
}

@Suite("Fleet on PostgreSQL", .serialized, .timingSensitive)
struct PostgresFleetTests {
    @Test func theSchemaIsCreatedWithAnUnloggedCacheTable() async throws {
        let schema = RunningStore.schema()
        let running = try await RunningStore.start(schema: schema)
        // Two stores migrating the same schema at once: the advisory lock orders them.
        let other = try await RunningStore.start(schema: schema)
        async let first: Void = running.store.migrateIfNeeded()
        async let second: Void = other.store.migrateIfNeeded()
        _ = try await (first, second)
        var persistence: [String: String] = [:]
        let rows = try await running.store.client.query(
            "SELECT c.relname, c.relpersistence::text FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = \(schema) AND c.relkind = 'r'")
        for try await (name, kind) in rows.decode((String, String).self) { persistence[name] = kind }
        #expect(persistence["curlew_fleet_entries"] == "u")
        #expect(persistence["curlew_fleet_locks"] == "u")
        #expect(persistence["curlew_fleet_leases"] == "p")
        #expect(persistence["curlew_fleet_limits"] == "p")
        var versions: [Int] = []
        for try await version in try await running.store.client.query("SELECT version FROM \(unescaped: schema).curlew_fleet_version").decode(Int.self) {
            versions.append(version)
        }
        #expect(versions == [PostgresFleetStore.migrations.count])
        await other.stop()
        await running.stop()
    }

    @Test func entriesLocksAndLeasesRoundTrip() async throws {
        let running = try await RunningStore.start(schema: RunningStore.schema())
        let store = running.store
        let entry = FleetEntry(key: "k1", tags: ["r:x", "a:1"], etag: "\"v1\"", lastModified: nil, expiresAt: Date().addingTimeInterval(60), payload: Data([0, 1, 2, 255]))
        try await store.write(entry)
        let read = try #require(try await store.read("k1"))
        #expect(read.payload == entry.payload)
        #expect(read.tags == entry.tags)
        #expect(read.etag == "\"v1\"")
        try await store.write(FleetEntry(key: "expired", expiresAt: Date().addingTimeInterval(-1), payload: Data([1])))
        #expect(try await store.read("expired") == nil)
        #expect(try await store.tryLock("L", owner: "a", ttl: .seconds(30)))
        #expect(try await store.tryLock("L", owner: "b", ttl: .seconds(30)) == false)
        try await store.unlock("L", owner: "a")
        #expect(try await store.tryLock("L", owner: "b", ttl: .milliseconds(1)))
        try await Task.sleep(for: .milliseconds(20))
        #expect(try await store.tryLock("L", owner: "c", ttl: .seconds(30)))
        let a = try await store.lease("q", capacity: 8, holder: "a", wanted: 8, inUse: 0, ttl: .seconds(30))
        #expect(a == FleetLease(granted: 8, holders: 1))
        let b = try await store.lease("q", capacity: 8, holder: "b", wanted: 8, inUse: 0, ttl: .seconds(30))
        #expect(b == FleetLease(granted: 0, holders: 2))
        // a renews while b wants: a is capped to half, but keeps recording the 8 it may be running.
        let a2 = try await store.lease("q", capacity: 8, holder: "a", wanted: 8, inUse: 8, ttl: .seconds(30))
        #expect(a2 == FleetLease(granted: 4, holders: 2))
        let a3 = try await store.lease("q", capacity: 8, holder: "a", wanted: 8, inUse: 4, ttl: .seconds(30))
        #expect(a3.granted == 4)
        let b2 = try await store.lease("q", capacity: 8, holder: "b", wanted: 8, inUse: 0, ttl: .seconds(30))
        #expect(b2.granted == 4)
        await running.stop()
    }

    @Test func aPurgeOnOneInstanceReachesTheOthersThroughNotify() async throws {
        let server = try await startOrigin()
        let schema = RunningStore.schema()
        let stores = [try await RunningStore.start(schema: schema), try await RunningStore.start(schema: schema), try await RunningStore.start(schema: schema)]
        for running in stores { await running.store.waitUntilListening() }
        let instances = try stores.map { try FleetInstance(baseURL: server.baseURL, store: $0.store) }
        #expect(try await instances[0].client.send(FleetText(path: "item/5")) == "item 5")
        await instances[0].cache.waitForPendingWrites()
        #expect(await instances[0].storage.flush())
        for instance in instances.dropFirst() {
            #expect(try await instance.client.send(FleetText(path: "item/5")) == "item 5")
            #expect(instance.storage.statistics.secondTierHits == 1)
        }
        #expect(server.requestCount == 1)
        for instance in instances { #expect(await instance.local.count == 1) }
        let started = ContinuousClock.now
        await instances[0].cache.invalidate(.keyPrefix("GET \(server.baseURL)/item/"))
        for instance in instances.dropFirst() {
            #expect(await eventually { await instance.local.count == 0 })
        }
        let elapsed = ContinuousClock.now - started
        print("fleet: purge on one instance evicted the other two first tiers after \(elapsed) (loopback PostgreSQL)")
        #expect(try await stores[0].store.read(FleetKeys.describe("1|public|GET \(server.baseURL)/item/5").key) == nil)
        _ = try await instances[1].client.send(FleetText(path: "item/5"))
        #expect(server.requestCount == 2)
        for running in stores { await running.stop() }
        await server.shutdown()
    }

    @Test func threeInstancesOfAHundredCallersFetchOnce() async throws {
        let gate = Gate()
        let server = try await startOrigin(gate: gate)
        let schema = RunningStore.schema()
        let stores = [try await RunningStore.start(schema: schema), try await RunningStore.start(schema: schema), try await RunningStore.start(schema: schema)]
        for running in stores { try await running.store.migrateIfNeeded() }
        let instances = try stores.map { try FleetInstance(baseURL: server.baseURL, store: $0.store) }
        let results = Task {
            try await withThrowingTaskGroup(of: String.self) { group in
                for instance in instances {
                    for _ in 0..<100 { group.addTask { try await instance.client.send(FleetText(path: "item/9")) } }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
        }
        #expect(await eventually { server.requestCount >= 1 })
        // Every caller has missed and waits before the origin answers (none arrives after it).
        #expect(
            await eventually {
                let leads = instances.map(\.storage.statistics).reduce(0) { $0 + $1.singleFlightLeads }
                return leads + instances.reduce(0) { $0 + $1.storage.waitingCallers } == 300
            })
        gate.release()
        let answers = try await results.value
        #expect(answers.count == 300)
        #expect(Set(answers) == ["item 9"])
        #expect(server.requestCount == 1)
        let stats = instances.map(\.storage.statistics)
        #expect(stats.reduce(0) { $0 + $1.singleFlightLeads } == 1)
        #expect(stats.reduce(0) { $0 + $1.failOpenReads } == 0)
        for running in stores { await running.stop() }
        await server.shutdown()
    }

    @Test func aFleetLimitOfEightHoldsAcrossThreeInstances() async throws {
        let server = try await startOrigin(delay: .milliseconds(30))
        let schema = RunningStore.schema()
        let stores = [try await RunningStore.start(schema: schema), try await RunningStore.start(schema: schema), try await RunningStore.start(schema: schema)]
        let queues = (0..<3).map { _ in QueueActor() }
        let limiters = try zip(queues, stores).map { try FleetLimiter(queues: $0, store: $1.store, limits: ["partner": 8], configuration: FleetLimiterTests.configuration()) }
        let running = limiters.map { limiter in Task { try await limiter.run() } }
        let clients = queues.map { APIClient(configuration: ClientConfiguration(baseURL: server.baseURL), queues: $0) }
        let answers = try await FleetLimiterTests.burst(clients, count: 40)
        #expect(answers.count == 120)
        #expect(server.peakInFlight(path: "/slow/0") <= 8)
        #expect(limiters.allSatisfy { $0.status(of: "partner")?.isFallback == false })
        running.forEach { $0.cancel() }
        for task in running { _ = await task.result }
        for running in stores { await running.stop() }
        await server.shutdown()
    }

    @Test func aStoreAtAClosedPortCostsNothingButTheSoftTimeout() async throws {
        let server = try await startOrigin()
        // Port 1: privileged, nothing listens; every connect is refused.
        let running = try await RunningStore.start(schema: RunningStore.schema(), url: "postgres://curlew@127.0.0.1:1/postgres")
        var configuration = FleetCacheStorage.Configuration()
        configuration.softTimeout = .milliseconds(50)
        configuration.writeTimeout = .milliseconds(200)
        let a = try FleetInstance(baseURL: server.baseURL, store: running.store, configuration: configuration)
        for n in 0..<5 {
            #expect(try await a.client.send(FleetText(path: "item/\(n)")) == "item \(n)")
        }
        #expect(server.requestCount == 5)
        #expect(a.storage.statistics.failOpenReads == 5)
        #expect(a.storage.statistics.breakerOpenings == 1)
        await running.stop()
        await server.shutdown()
    }
    @Test func postgresStoppedMidRunFailsNoCallAndTheWritesAreReplayed() async throws {
        // A PostgreSQL of this test's own: the tests running in parallel keep the shared one.
        let postgres = PrivatePostgres(name: "single-outage")
        let url = try await postgres.start()
        do {
            try await Self.stopPostgresMidRun(postgres, url: url)
        } catch {
            _ = try? await postgres.run("stop")
            throw error
        }
        try await postgres.run("stop")
    }

    static func stopPostgresMidRun(_ postgres: PrivatePostgres, url: String) async throws {
        let server = try await startOrigin()
        let running = try await RunningStore.start(schema: RunningStore.schema(), url: url)
        await running.store.waitUntilListening()
        var configuration = FleetCacheStorage.Configuration()
        configuration.softTimeout = .milliseconds(50)
        configuration.writeTimeout = .milliseconds(500)
        configuration.breakDuration = .milliseconds(200)
        configuration.singleFlight = nil
        let a = try FleetInstance(baseURL: server.baseURL, store: running.store, configuration: configuration)
        for n in 0..<5 { #expect(try await a.client.send(FleetText(path: "item/\(n)")) == "item \(n)") }
        await a.cache.waitForPendingWrites()
        #expect(await a.storage.flush())

        // Counted from here: under load a read before the outage can outlast the 50 ms soft
        // timeout too (a new connection), and that is failing open as well.
        let failedOpenBefore = a.storage.statistics.failOpenReads
        try await postgres.run("down")
        var added: [Duration] = []
        for n in 5..<25 {
            let started = ContinuousClock.now
            #expect(try await a.client.send(FleetText(path: "item/\(n)")) == "item \(n)")
            added.append(ContinuousClock.now - started)
        }
        #expect(server.requestCount == 25)
        #expect(a.storage.statistics.failOpenReads - failedOpenBefore == 20, "every read while PostgreSQL is down fails open")
        await a.cache.waitForPendingWrites()
        added.sort()
        print("fleet: PostgreSQL down, 20 calls, none failed; call time p50 \(added[10]), p99 \(added[19]) (soft timeout 50 ms)")

        try await postgres.run("up")
        // No restart of the instance: the breaker's probe finds the database again, the queued
        // writes land, and another instance reads them.
        #expect(await a.storage.flush(timeout: .seconds(60)))
        for n in 5..<25 {
            let key = FleetKeys.describe("1|public|GET \(server.baseURL)/item/\(n)").key
            #expect(try await running.store.read(key) != nil)
        }
        let b = try FleetInstance(baseURL: server.baseURL, store: running.store)
        #expect(try await b.client.send(FleetText(path: "item/24")) == "item 24")
        #expect(server.requestCount == 25)
        #expect(b.storage.statistics.secondTierHits == 1)
        await running.stop()
        await server.shutdown()
    }
}
