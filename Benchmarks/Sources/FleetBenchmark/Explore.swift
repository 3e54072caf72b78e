// `FleetBenchmark <url> <reads> --explore`: where a second-tier read's time goes. The same
// primary-key read through postgres-nio's pooled client, through a dedicated connection (named
// prepared statement, unnamed statement, the EventLoopFuture API), and the client-side work of a
// hit without any database (the in-memory store). Not part of BENCHMARKS.md's table; its numbers
// are in the notes under it.
import Curlew
import CurlewFleet
import Foundation
import Logging
import NIOCore
import NIOPosix
import PostgresNIO
import Synchronization

/// The read `PostgresFleetStore` prepares, on the "bench" row.
struct BenchRead: PostgresPreparedStatement {
    static let name = "curlew_bench_read"
    static let sql = """
        SELECT payload, tags, etag, last_modified, expires_at FROM curlew_bench.curlew_fleet_entries
        WHERE key = $1 AND (expires_at IS NULL OR expires_at > now())
        """
    typealias Row = (Data, [String], String?, String?, Date?)
    var key: String
    func makeBindings() throws -> PostgresBindings {
        var bindings = PostgresBindings(capacity: 1)
        bindings.append(key)
        return bindings
    }
    func decodeRow(_ row: PostgresRow) throws -> Row { try row.decode(Row.self) }
}

/// A store that reads through the pool under the generic soft timeout (two tasks): what a
/// second-tier hit cost before the read connection. Everything else is `store`'s.
struct PoolOnly: FleetStore {
    let store: PostgresFleetStore
    func read(_ key: String) async throws -> FleetEntry? { try await store.read(key) }
    func write(_ entry: FleetEntry) async throws { try await store.write(entry) }
    func invalidate(_ target: FleetInvalidation) async throws { try await store.invalidate(target) }
    func invalidations() -> AsyncStream<FleetInvalidation> { store.invalidations() }
    func tryLock(_ key: String, owner: String, ttl: Duration) async throws -> Bool { try await store.tryLock(key, owner: owner, ttl: ttl) }
    func unlock(_ key: String, owner: String) async throws { try await store.unlock(key, owner: owner) }
    func lease(_ limit: String, capacity: Int, holder: String, wanted: Int, inUse: Int, ttl: Duration) async throws -> FleetLease {
        try await store.lease(limit, capacity: capacity, holder: holder, wanted: wanted, inUse: inUse, ttl: ttl)
    }
}

/// The variants side by side, in interleaved rounds (the machine's load drifts; each round runs
/// every variant once, `reads / rounds` calls each).
func explore(store: PostgresFleetStore, configuration: PostgresFleetStore.Configuration, entry: CacheEntry, reads: Int, concurrency: Int) async throws {
    let logger = Logger(label: "bench")
    let client = store.client
    var settings = PostgresConnection.Configuration(
        host: configuration.client.host ?? "127.0.0.1", port: configuration.client.port ?? 5432, username: configuration.client.username,
        password: configuration.client.password, database: configuration.client.database, tls: .disable)
    settings.options.requireBackendKeyData = true
    let connection = try await PostgresConnection.connect(on: MultiThreadedEventLoopGroup.singleton.next(), configuration: settings, id: 1, logger: logger)
    let unnamedSQL = BenchRead.sql

    var tiers = FleetCacheStorage.Configuration()
    tiers.softTimeout = .seconds(1)
    tiers.singleFlight = nil
    let before = try FleetCacheStorage(local: NoFirstTier(), store: PoolOnly(store: store), configuration: tiers)
    let after = try FleetCacheStorage(local: NoFirstTier(), store: store, configuration: tiers)
    let memory = InMemoryFleetStore()
    let clientSide = try FleetCacheStorage(local: NoFirstTier(), store: memory, configuration: tiers)
    try await clientSide.store(entry)
    _ = await clientSide.flush()
    let key = entry.key

    let variants: [(String, @Sendable () async throws -> Void)] = [
        ("pool, named prepared, row stream (client.execute)", { for try await _ in try await client.execute(BenchRead(key: "bench")) { break } }),
        ("dedicated connection, named prepared, row stream (connection.execute)", {
            for try await _ in try await connection.execute(BenchRead(key: "bench"), logger: logger) { break }
        }),
        ("dedicated connection, unnamed, rows collected on the loop (EventLoopFuture)", {
            var bindings = PostgresBindings(capacity: 1)
            bindings.append("bench")
            let result = try await connection.query(PostgresQuery(unsafeSQL: unnamedSQL, binds: bindings), logger: logger).get()
            _ = try result.rows.first?.decode(BenchRead.Row.self)
        }),
        ("FleetStore.read, pool, under the generic soft timeout (before)", { _ = try await PoolOnly(store: store).read("bench", timeout: .seconds(1)) }),
        ("FleetStore.read(_:timeout:), the read connection (after)", { _ = try await store.read("bench", timeout: .seconds(1)) }),
        ("second-tier hit, before (pool + generic soft timeout)", { _ = await before.entry(for: key) }),
        ("second-tier hit, after (read connection, timer on its event loop)", { _ = await after.entry(for: key) }),
        ("second-tier hit on InMemoryFleetStore (client-side work only)", { _ = await clientSide.entry(for: key) }),
    ]
    // `FLEET_EXPLORE_ONLY=<index>`: that variant alone, `reads` times (for `perf record`).
    if let only = ProcessInfo.processInfo.environment["FLEET_EXPLORE_ONLY"].flatMap({ Int($0) }), variants.indices.contains(only) {
        try await measure("  " + variants[only].0, count: reads, variants[only].1)
        return
    }
    let rounds = 5
    let perRound = max(1, reads / rounds)
    var p50s = Array(repeating: [Double](), count: variants.count)
    var cpus = Array(repeating: [Double](), count: variants.count)
    for (_, body) in variants { for _ in 0..<200 { try await body() } }
    for _ in 0..<rounds {
        for (index, (_, body)) in variants.enumerated() {
            var samples: [Duration] = []
            samples.reserveCapacity(perRound)
            let clock = ContinuousClock()
            let cpu = cpuMicroseconds()
            for _ in 0..<perRound {
                let one = clock.now
                try await body()
                samples.append(clock.now - one)
            }
            cpus[index].append((cpuMicroseconds() - cpu) / Double(perRound))
            samples.sort()
            p50s[index].append(percentile(samples, 0.5))
        }
    }
    func median(_ values: [Double]) -> Double { values.sorted()[values.count / 2] }
    print("concurrency 1, \(rounds) interleaved rounds of \(perRound) calls; median over rounds of each round's p50 and CPU per call:")
    for (index, (label, _)) in variants.enumerated() {
        print(String(format: "  %@: p50 %.1f µs, CPU %.1f µs/call", label, median(p50s[index]), median(cpus[index])))
    }
    for (index, (label, body)) in variants.enumerated() where index != 2 && index != 1 {
        try await measureConcurrently("  " + label, count: reads, concurrency: concurrency, body)
    }
    try await connection.close()
}

/// A counter shared by concurrent callers.
final class ManagedAtomicCounter: Sendable {
    private let value = Mutex(0)
    func next() -> Int { value.withLock { $0 += 1; return $0 } }
}
