import Curlew
@testable import CurlewFleet
import Foundation
import LoopbackServer
import PostgresNIO
import TestSupport
import Testing

/// What a user meets before the fleet is up: a database that is down when the service starts,
/// and schema names PostgreSQL reads as keywords or numbers.
@Suite("Fleet on PostgreSQL: startup", .serialized, .timeLimit(.minutes(3)))
struct PostgresFleetStartupTests {
    /// A schema is an identifier of the user's choosing: `order` is a keyword of SQL and
    /// `2024_…` starts with a digit. Each store creates its schema, writes and reads an entry,
    /// and a second store of the same schema reads it too.
    @Test(arguments: ["order", "2024_fleet_"])
    func aSchemaNamedLikeAKeywordOrStartingWithADigitWorks(_ prefix: String) async throws {
        let schema = prefix == "order" ? "order" : prefix + UUID().uuidString.prefix(8).lowercased()
        let running = try await RunningStore.start(schema: schema)
        #expect(running.store.configuration.schema == schema)
        try await running.store.migrateIfNeeded()
        let entry = FleetEntry(key: "k-\(UUID().uuidString)", expiresAt: Date().addingTimeInterval(60), payload: Data([7, 8, 9]))
        try await running.store.write(entry)
        let other = try await RunningStore.start(schema: schema)
        #expect(try await other.store.read(entry.key)?.payload == Data([7, 8, 9]))
        await other.stop()
        await running.stop()
    }

    /// PostgreSQL is down when the instance starts: every call is answered by the origin (none
    /// fails), and once the database is up — without a restart of the instance — the schema is
    /// created, the writes kept meanwhile land and another instance is served from them.
    @Test func postgresDownWhenTheInstanceStartsFailsNoCallAndCatchesUpOnceItIsUp() async throws {
        let postgres = PrivatePostgres(name: "startup-outage")
        let url = try await postgres.start()
        do {
            try await postgres.run("down")
            try await Self.startWhileDown(postgres, url: url)
        } catch {
            _ = try? await postgres.run("stop")
            throw error
        }
        try await postgres.run("stop")
    }

    static func startWhileDown(_ postgres: PrivatePostgres, url: String) async throws {
        let server = try await startOrigin()
        let running = try await RunningStore.start(schema: RunningStore.schema(), url: url)
        var configuration = FleetCacheStorage.Configuration()
        configuration.softTimeout = .milliseconds(50)
        configuration.writeTimeout = .milliseconds(500)
        configuration.breakDuration = .milliseconds(200)
        configuration.singleFlight = nil
        let a = try FleetInstance(baseURL: server.baseURL, store: running.store, configuration: configuration)
        for n in 0..<10 { #expect(try await a.client.send(FleetText(path: "item/\(n)")) == "item \(n)") }
        #expect(server.requestCount == 10)
        #expect(a.storage.statistics.failOpenReads == 10)
        #expect(a.storage.statistics.secondTierHits == 0)
        await a.cache.waitForPendingWrites()

        try await postgres.run("up")
        #expect(await a.storage.flush(timeout: .seconds(60)))
        await running.store.waitUntilListening()
        for n in 0..<10 {
            let key = FleetKeys.describe("1|public|GET \(server.baseURL)/item/\(n)").key
            #expect(try await running.store.read(key) != nil)
        }
        let b = try FleetInstance(baseURL: server.baseURL, store: running.store)
        #expect(try await b.client.send(FleetText(path: "item/9")) == "item 9")
        #expect(server.requestCount == 10)
        #expect(b.storage.statistics.secondTierHits == 1)
        await running.stop()
        await server.shutdown()
    }

    /// PostgreSQL is down when a fleet-limited queue starts: its calls go out on the local share
    /// (no call fails or waits for the database), the limiter says so, and once the database is
    /// up — without a restart — the queue runs on leases again.
    @Test func aFleetLimitWhosePostgresIsDownAtStartRunsOnItsLocalShareUntilItIsUp() async throws {
        let postgres = PrivatePostgres(name: "startup-limit")
        let url = try await postgres.start()
        do {
            try await postgres.run("down")
            try await Self.limitWhileDown(postgres, url: url)
        } catch {
            _ = try? await postgres.run("stop")
            throw error
        }
        try await postgres.run("stop")
    }

    static func limitWhileDown(_ postgres: PrivatePostgres, url: String) async throws {
        let server = try await startOrigin()
        let running = try await RunningStore.start(schema: RunningStore.schema(), url: url)
        let queues = QueueActor()
        var configuration = FleetLimiter.Configuration()
        configuration.leaseTimeout = .milliseconds(250)
        let limiter = try FleetLimiter(queues: queues, store: running.store, limits: ["partner": 4], configuration: configuration)
        let leasing = Task { try await limiter.run() }
        let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL), queues: queues)
        let answers = try await FleetLimiterTests.burst([client], count: 8)
        #expect(answers.count == 8)
        #expect(server.requestCount == 8)
        let fallback = try #require(limiter.status(of: "partner"))
        #expect(fallback.isFallback)
        #expect(fallback.fallbacks == 1)
        #expect(fallback.slots == 4)

        try await postgres.run("up")
        #expect(await eventually { limiter.status(of: "partner")?.isFallback == false })
        let afterwards = try await FleetLimiterTests.burst([client], count: 8)
        #expect(afterwards.count == 8)
        #expect(server.requestCount == 16)
        #expect((limiter.status(of: "partner")?.leases ?? 0) >= 1)
        leasing.cancel()
        _ = await leasing.result
        await running.stop()
        await server.shutdown()
    }
}
