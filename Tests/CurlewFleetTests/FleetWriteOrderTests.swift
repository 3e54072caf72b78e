import Curlew
@testable import CurlewFleet
import Foundation
import LoopbackServer
import PostgresNIO
import TestSupport
import Testing

/// A write never brings back an older answer: not over an entry another instance requested
/// later, and not after an invalidation that came after its request (a write queued during an
/// outage and replayed once the store answers again). The same rules in both stores.
@Suite("Fleet store: writes never bring back older answers", .timeLimit(.minutes(3)))
struct FleetWriteOrderTests {
    static func checkWriteOrder(_ store: some FleetStore) async throws {
        let now = Date()
        func entry(_ key: String, _ byte: UInt8, requested offset: TimeInterval?, tags: [String] = []) -> FleetEntry {
            FleetEntry(
                key: key, tags: tags, expiresAt: now.addingTimeInterval(600), payload: Data([byte]),
                requestedAt: offset.map { now.addingTimeInterval($0) })
        }
        let run = UUID().uuidString.prefix(8)
        // Newer wins, whatever order the writes arrive in.
        let newer = "newer-\(run)"
        try await store.write(entry(newer, 2, requested: -1))
        try await store.write(entry(newer, 1, requested: -5))
        #expect(try await store.read(newer)?.payload == Data([2]))
        #expect(try await store.read(newer)?.requestedAt.map { abs($0.timeIntervalSince(now.addingTimeInterval(-1))) < 0.001 } == true)
        try await store.write(entry(newer, 3, requested: 0))
        #expect(try await store.read(newer)?.payload == Data([3]))

        // An invalidation after the request wins over the write that arrives later, for each
        // kind of invalidation; an answer requested after it lands.
        let targets: [(FleetInvalidation, key: String, tags: [String])] = [
            (.key("k-\(run)"), "k-\(run)", []),
            (.prefix("p-\(run)/"), "p-\(run)/item", []),
            (.tag("t-\(run)"), "t-item-\(run)", ["t-\(run)", "other"]),
        ]
        for (target, key, tags) in targets {
            try await store.invalidate(target)
            try await store.write(entry(key, 1, requested: -10, tags: tags))
            #expect(try await store.read(key) == nil, "\(target)")
            try await store.write(entry(key, 2, requested: 5, tags: tags))
            #expect(try await store.read(key)?.payload == Data([2]), "\(target)")
        }
        // A key the invalidation does not cover is written as before.
        try await store.write(entry("untouched-\(run)", 4, requested: -10))
        #expect(try await store.read("untouched-\(run)")?.payload == Data([4]))
        // An entry without a request time always lands.
        try await store.write(entry("k-\(run)", 9, requested: nil))
        #expect(try await store.read("k-\(run)")?.payload == Data([9]))
    }

    @Test func theInMemoryStoreKeepsTheNewerAnswer() async throws {
        try await Self.checkWriteOrder(InMemoryFleetStore())
    }

    @Test func thePostgresStoreKeepsTheNewerAnswer() async throws {
        let running = try await RunningStore.start(schema: RunningStore.schema())
        try await Self.checkWriteOrder(running.store)
        await running.stop()
    }

    /// A write queued longer than the store remembers invalidations is not sent.
    @Test func aWriteOlderThanTheInvalidationMemoryIsNotReplayed() {
        let now = Date()
        #expect(FleetCacheStorage.isTooOldToReplay(now.addingTimeInterval(-3_600), now: now))
        #expect(FleetCacheStorage.isTooOldToReplay(now.addingTimeInterval(-3_301), now: now))
        #expect(!FleetCacheStorage.isTooOldToReplay(now.addingTimeInterval(-3_299), now: now))
        #expect(!FleetCacheStorage.isTooOldToReplay(now, now: now))
    }

    /// PostgreSQL cannot index a key of 10 kB: the write is refused, the storage drops it and goes
    /// on (no breaker opening, the next write lands), and the answer stays in the first tier.
    @Test func aKeyTooLongToIndexIsRefusedWithoutStoppingTheQueue() async throws {
        let server = try await startOrigin()
        let running = try await RunningStore.start(schema: RunningStore.schema())
        var generator = SystemRandomNumberGenerator()
        let long = String((0..<10_000).map { _ in "abcdefghijklmnopqrstuvwxyz0123456789".randomElement(using: &generator) ?? "a" })
        let refused = await #expect(throws: FleetStoreError.self) {
            try await running.store.write(FleetEntry(key: long, expiresAt: Date().addingTimeInterval(60), payload: Data([1])))
        }
        #expect(refused?.isRefusal == true)

        let instance = try FleetInstance(baseURL: server.baseURL, store: running.store)
        #expect(try await instance.client.send(FleetText(path: "item/\(long)")) == "item \(long)")
        #expect(try await instance.client.send(FleetText(path: "item/1")) == "item 1")
        await instance.cache.waitForPendingWrites()
        #expect(await instance.storage.flush())
        let statistics = instance.storage.statistics
        #expect(statistics.refusedWrites == 1)
        #expect(statistics.storeWrites >= 1)
        #expect(statistics.breakerOpenings == 0)
        #expect(try await instance.client.send(FleetText(path: "item/\(long)")) == "item \(long)")
        #expect(server.requestCount == 2, "the refused answer is still served from the first tier")
        await running.stop()
        await server.shutdown()
    }

    /// A NOTIFY payload holds at most 7,999 bytes: the invalidation of a longer key still
    /// removes the row, and the other instances hear `*`.
    @Test func anInvalidationTooLongForNotifyIsAnnouncedAsAll() async throws {
        let schema = RunningStore.schema()
        let first = try await RunningStore.start(schema: schema)
        let second = try await RunningStore.start(schema: schema)
        let key = String(repeating: "k", count: 9_000)
        try await first.store.write(FleetEntry(key: key, expiresAt: Date().addingTimeInterval(60), payload: Data([1])))
        var heard = second.store.invalidations().makeAsyncIterator()
        try await first.store.invalidate(.key(key))
        #expect(await heard.next() == .all)
        #expect(try await second.store.read(key) == nil)
        await second.stop()
        await first.stop()
    }

    /// The sweep deletes what reads skip: expired entries, locks that ran out, invalidations
    /// older than the store's memory; the rest stays.
    @Test func theSweepDeletesExpiredRowsOnly() async throws {
        let schema = RunningStore.schema()
        let running = try await RunningStore.start(schema: schema)
        let store = running.store
        try await store.write(FleetEntry(key: "expired", expiresAt: Date().addingTimeInterval(-1), payload: Data([1])))
        try await store.write(FleetEntry(key: "fresh", expiresAt: Date().addingTimeInterval(60), payload: Data([2])))
        #expect(try await store.tryLock("short", owner: "a", ttl: .milliseconds(1)))
        #expect(try await store.tryLock("long", owner: "a", ttl: .seconds(60)))
        try await store.invalidate(.key("recent"))
        _ = try await store.client.query("INSERT INTO \(unescaped: schema).curlew_fleet_purges (kind, argument, purged_at) VALUES ('k', 'old', now() - interval '2 hours')")
        try await Task.sleep(for: .milliseconds(20))
        try await store.sweep()
        func keys(_ sql: String) async throws -> [String] {
            var keys: [String] = []
            for try await key in try await store.client.query(PostgresQuery(unsafeSQL: sql)).decode(String.self) { keys.append(key) }
            return keys.sorted()
        }
        #expect(try await keys("SELECT key FROM \"\(schema)\".curlew_fleet_entries") == ["fresh"])
        #expect(try await keys("SELECT key FROM \"\(schema)\".curlew_fleet_locks") == ["long"])
        #expect(try await keys("SELECT argument FROM \"\(schema)\".curlew_fleet_purges") == ["recent"])
        await running.stop()
    }
}

/// A duration of `.seconds(Int64.max)` (a setting meaning "forever") has no nanosecond count:
/// the PostgreSQL store's read timer and lock time to live stopped the process converting it.
@Suite("Fleet store: durations too long to count", .timeLimit(.minutes(1)))
struct FleetLongDurationTests {
    @Test func theStoreTakesAForeverTimeoutAndTimeToLive() async throws {
        #expect(nanoseconds(.seconds(Int64.max)) == .max)
        #expect(nanoseconds(.seconds(-Int64.max)) == .min)
        #expect(nanoseconds(.milliseconds(1_500)) == 1_500_000_000)
        let running = try await RunningStore.start(schema: RunningStore.schema())
        #expect(try await running.store.read("absent", timeout: .seconds(Int64.max)) == nil)
        #expect(try await running.store.tryLock("forever", owner: "a", ttl: .seconds(Int64.max)))
        #expect(try await running.store.tryLock("forever", owner: "b", ttl: .seconds(1)) == false)
        let lease = try await running.store.lease("q", capacity: 2, holder: "a", wanted: 1, inUse: 0, ttl: .seconds(Int64.max))
        #expect(lease.granted == 1)
        await running.stop()
    }
}
