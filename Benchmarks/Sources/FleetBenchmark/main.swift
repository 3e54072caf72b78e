// The second tier's read cost through postgres-nio, next to pgbench's floor for the same query
// (Benchmarks/fleet.sh runs both against one PostgreSQL in one run), and the per-call cost of a
// fleet-limited queue while a lease is in hand. Prints one line per row.
//
//   swift run -c release --package-path Benchmarks FleetBenchmark <postgres-url> [reads]
import Curlew
import CurlewFleet
import Foundation
import Synchronization

/// A first tier that never holds anything, so every lookup goes to the second tier.
struct NoFirstTier: CacheStorage {
    func entry(for key: String) async -> CacheEntry? { nil }
    func store(_ entry: CacheEntry) async throws {}
    func removeEntry(for key: String) async {}
    func removeEntries(where predicate: @Sendable (String) -> Bool) async -> Int { 0 }
    func removeExpired(before date: Date) async -> Int { 0 }
}

func microseconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) * 1e6 + Double(duration.components.attoseconds) / 1e12
}

func percentile(_ sorted: [Duration], _ p: Double) -> Double {
    microseconds(sorted[min(sorted.count - 1, Int(Double(sorted.count) * p))])
}

/// The process's CPU time (user + system, every thread: the event loops' too), in µs.
func cpuMicroseconds() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &time)
    return Double(time.tv_sec) * 1e6 + Double(time.tv_nsec) / 1e3
}

/// `count` calls of `body` one after another (concurrency 1): latency per call, and the
/// process's CPU time per call.
func measure(_ label: String, count: Int, _ body: () async throws -> Void) async rethrows {
    for _ in 0..<min(1000, count) { try await body() }
    var samples: [Duration] = []
    samples.reserveCapacity(count)
    let clock = ContinuousClock()
    let cpu = cpuMicroseconds()
    let started = clock.now
    for _ in 0..<count {
        let one = clock.now
        try await body()
        samples.append(clock.now - one)
    }
    let total = clock.now - started
    let cpuPerCall = (cpuMicroseconds() - cpu) / Double(count)
    samples.sort()
    let mean = microseconds(total) / Double(count)
    print(
        String(
            format: "%@: mean %.1f µs, p50 %.1f µs, p99 %.1f µs, CPU %.1f µs/call (%d calls)", label, mean, percentile(samples, 0.5),
            percentile(samples, 0.99), cpuPerCall, count))
    // Each row as soon as it is measured, also into a pipe or file (a fully buffered stdout made a
    // run look stuck before its first row when it was in fact waiting further on).
    fflush(nil)
}

/// `count` calls of `body` from `concurrency` tasks at once: throughput, mean latency per call
/// and the process's CPU time per call (what a busy service pays).
func measureConcurrently(_ label: String, count: Int, concurrency: Int, _ body: @escaping @Sendable () async throws -> Void) async throws {
    let perTask = count / concurrency
    let clock = ContinuousClock()
    let cpu = cpuMicroseconds()
    let started = clock.now
    try await withThrowingTaskGroup(of: Void.self) { group in
        for _ in 0..<concurrency {
            group.addTask { for _ in 0..<perTask { try await body() } }
        }
        try await group.waitForAll()
    }
    let total = clock.now - started
    let calls = Double(perTask * concurrency)
    let cpuPerCall = (cpuMicroseconds() - cpu) / calls
    print(
        String(
            format: "%@, concurrency %d: %.0f calls/s, mean %.1f µs per call, CPU %.1f µs/call (%d calls)", label, concurrency,
            calls / (microseconds(total) / 1e6), microseconds(total) * Double(concurrency) / calls, cpuPerCall, Int(calls)))
    // Each row as soon as it is measured, also into a pipe or file (a fully buffered stdout made a
    // run look stuck before its first row when it was in fact waiting further on).
    fflush(nil)
}

let arguments = CommandLine.arguments
guard arguments.count >= 2, let configuration = try? PostgresFleetStore.Configuration(url: arguments[1], schema: "curlew_bench") else {
    print("usage: FleetBenchmark postgres://user@host:port/db [reads]")
    exit(2)
}
let reads = arguments.count >= 3 ? Int(arguments[2]) ?? 20_000 : 20_000
// `--concurrency N`: the concurrent rows' callers at once (default 16).
let concurrency = arguments.firstIndex(of: "--concurrency").flatMap { arguments.dropFirst($0 + 1).first }.flatMap { Int($0) } ?? 16
// `--prepare-only`: write the entry and its pgbench copy, then stop.
let store = PostgresFleetStore(configuration: configuration)
let running = Task { try await store.run() }
await store.waitUntilListening()

// The entry the pgbench script reads too: a 225-byte body under key "bench".
let body = Data(repeating: UInt8(ascii: "x"), count: 225)
let entry = CacheEntry(
    key: "1|public|GET http://127.0.0.1/small.json", status: 200, headers: [.contentType: "application/json"],
    body: body, url: "http://127.0.0.1/small.json", requestTime: Date(), storedAt: Date(), discardAfter: Date().addingTimeInterval(86_400))
var tiers = FleetCacheStorage.Configuration()
tiers.softTimeout = .seconds(1)
tiers.singleFlight = nil
let storage = try FleetCacheStorage(local: NoFirstTier(), store: store, configuration: tiers)
try await storage.store(entry)
guard await storage.flush() else { fatalError("the entry did not reach PostgreSQL") }
// The same row under the plain key "bench" for pgbench (Benchmarks/fleet.sh).
try await store.client.query(
    """
    INSERT INTO curlew_fleet_entries (key, tags, etag, last_modified, expires_at, payload)
    SELECT 'bench', tags, etag, last_modified, expires_at, payload FROM curlew_fleet_entries WHERE key LIKE 'GET http://127.0.0.1/small.json%'
    ON CONFLICT (key) DO UPDATE SET payload = EXCLUDED.payload
    """)
if arguments.contains("--prepare-only") {
    running.cancel()
    _ = await running.result
    exit(0)
}

if arguments.contains("--explore") {
    try await explore(store: store, configuration: configuration, entry: entry, reads: reads, concurrency: concurrency)
    running.cancel()
    _ = await running.result
    exit(0)
}

try await measure("postgres-nio read through the pool (FleetStore.read, prepared)", count: reads) {
    _ = try await store.read("bench")
}
try await measure("postgres-nio read, soft timeout (FleetStore.read(_:timeout:), the read connection)", count: reads) {
    _ = try await store.read("bench", timeout: .seconds(1))
}
await measure("second-tier hit (FleetCacheStorage.entry, decode included)", count: reads) {
    _ = await storage.entry(for: entry.key)
}
precondition(storage.statistics.secondTierHits >= reads, "every lookup must be a second-tier hit")
try await measureConcurrently("postgres-nio read through the pool (FleetStore.read, prepared)", count: reads, concurrency: concurrency) {
    _ = try await store.read("bench")
}
// A read not answered within the timeout is counted, not fatal (a loaded machine).
let timeouts = Mutex(0)
try await measureConcurrently("postgres-nio read, soft timeout (FleetStore.read(_:timeout:))", count: reads, concurrency: concurrency) {
    do {
        _ = try await store.read("bench", timeout: .seconds(1))
    } catch let error as FleetStoreError where error == .timedOut {
        timeouts.withLock { $0 += 1 }
    }
}
print("  (reads not answered within 1 s: \(timeouts.withLock { $0 }))")
let key = entry.key
try await measureConcurrently("second-tier hit (FleetCacheStorage.entry, decode included)", count: reads, concurrency: concurrency) {
    _ = await storage.entry(for: key)
}
precondition(storage.statistics.secondTierHits >= 2 * reads - concurrency, "every lookup must be a second-tier hit")

// A fleet-limited queue with a lease in hand against a plain queue of the same limit.
let plain = QueueActor(limits: ["partner": 8])
try await measure("plain queue, limit 8 (QueueActor.run)", count: 200_000) {
    _ = try await plain.run(in: "partner") { 1 }
}
let fleetQueues = QueueActor()
let limiter = try FleetLimiter(queues: fleetQueues, store: store, limits: ["partner": 8])
let limiting = Task { try await limiter.run() }
// Demand makes the limiter lease: a call that waits until the lease is in hand. (This used to wait
// for slots after the call had ended: with no demand left the limiter may already have given its
// slot back, and the loop then waited for ever — the benchmark's "hang".)
_ = try await fleetQueues.run(in: "partner") {
    while (limiter.status(of: "partner")?.slots ?? 0) < 1 { try await Task.sleep(for: .milliseconds(1)) }
    return 1
}
try await measure("fleet-limited queue, lease in hand", count: 200_000) {
    _ = try await fleetQueues.run(in: "partner") { 1 }
}
limiting.cancel()
_ = await limiting.result
running.cancel()
_ = await running.result
