import Curlew
@testable import CurlewFleet
import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import LoopbackServer
import PostgresNIO
import Synchronization
import TestSupport
import Testing

/// The fleet as it runs: three processes — the test binary run again in a child role — sharing
/// one PostgreSQL database, calling an origin in the parent (a loopback server that counts
/// requests and their peak concurrency). The parent drives the children through phases (the
/// origin's `/control` answers the current one) and reads their `FLEET <index> <step> k=v …`
/// lines.
@Suite("Fleet across processes", .serialized, .timeLimit(.minutes(4)), .timingSensitive)
struct FleetMultiProcessTests {
    // MARK: a. single-flight

    @Test func threeProcessesOfAHundredCallersFetchAMissingKeyOnce() async throws {
        if let child = FleetChildEnvironment.current { return try await Self.singleFlightChild(child) }
        let fleet = try await FleetRun(test: "threeProcessesOfAHundredCallersFetchAMissingKeyOnce", gated: true)
        defer { fleet.end() }
        _ = try await fleet.reports("ready")
        fleet.phase.set("go")
        // Every caller of the fleet waits — one at the origin, the rest for its answer — before
        // the origin answers.
        let waiting = try await fleet.reports("waiting")
        #expect(waiting.map { $0["callers"] } == ["100", "100", "100"])
        // The lead is counted when it takes the lock, a moment before its request reaches the
        // origin (held there by the gate): wait for it, then it must be the only one.
        #expect(await eventually { fleet.origin.requests(path: "/item/9").count >= 1 })
        #expect(fleet.origin.requests(path: "/item/9").count == 1)
        fleet.gate.release()
        let done = try await fleet.reports("done")
        #expect(done.map { $0["answers"] } == ["100", "100", "100"], "every caller got the origin's body")
        #expect(done.compactMap { Int($0["leads"] ?? "") }.reduce(0, +) == 1, "one process fetched")
        #expect(done.compactMap { Int($0["failOpen"] ?? "") }.reduce(0, +) == 0)
        #expect(fleet.origin.requests(path: "/item/9").count == 1, "the origin saw one request for 300 callers in 3 processes")
        try await fleet.expectChildrenExited()
    }

    private static func singleFlightChild(_ child: FleetChildEnvironment) async throws {
        let running = try await child.store()
        let instance = try FleetInstance(baseURL: child.origin, store: running.store)
        child.say("ready")
        try await child.waitFor("go")
        let results = Task {
            try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<100 { group.addTask { try await instance.client.send(FleetText(path: "item/9")) } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
        }
        // The fetching caller is counted as a lead, every other caller waits in a flight.
        #expect(await eventually { instance.storage.waitingCallers + instance.storage.statistics.singleFlightLeads == 100 })
        child.say("waiting", ["callers": instance.storage.waitingCallers + instance.storage.statistics.singleFlightLeads])
        let answers = try await results.value
        await instance.cache.waitForPendingWrites()
        #expect(await instance.storage.flush())
        let statistics = instance.storage.statistics
        child.say(
            "done",
            [
                "answers": answers.filter { $0 == "item 9" }.count, "leads": statistics.singleFlightLeads,
                "follows": statistics.singleFlightFollows, "failOpen": statistics.failOpenReads,
            ])
        await child.finish(running)
    }

    // MARK: b. purge

    @Test func aPurgeInOneProcessEvictsTheEntryInEveryProcess() async throws {
        if let child = FleetChildEnvironment.current { return try await Self.purgeChild(child) }
        let fleet = try await FleetRun(test: "aPurgeInOneProcessEvictsTheEntryInEveryProcess")
        defer { fleet.end() }
        _ = try await fleet.reports("ready")
        let path = "/item/5"
        fleet.phase.set("fill")
        _ = try await fleet.reports("fill")
        #expect(fleet.origin.requests(path: path).count == 1)
        fleet.phase.set("read")
        let read = try await fleet.reports("read")
        #expect(read.map { $0["secondTierHits"] } == ["0", "1", "1"], "the other two read the first one's answer from PostgreSQL")
        #expect(read.map { $0["local"] } == ["1", "1", "1"])
        #expect(fleet.origin.requests(path: path).count == 1)
        fleet.phase.set("purge")
        let purged = try await fleet.reports("purge")
        #expect(purged.map { $0["local"] } == ["0", "0", "0"], "every first tier evicted the purged entry")
        #expect(purged.map { $0["stored"] } == ["absent", "absent", "absent"])
        for report in purged.dropFirst() { print("fleet (3 processes): purge in process 0 evicted process \(report["index"] ?? "?")'s entry after \(report["after"] ?? "?")") }
        fleet.phase.set("refetch")
        let refetched = try await fleet.reports("refetch")
        #expect(refetched[1]["misses"] == "1", "process 1 missed both tiers this time")
        #expect(fleet.origin.requests(path: path).count == 2, "the purged entry was fetched from the origin once more")
        fleet.phase.set("reread")
        let reread = try await fleet.reports("reread")
        #expect(reread.map { $0["secondTierHits"] } == ["1", "1", "2"], "processes 0 and 2 read process 1's fresh answer from PostgreSQL")
        #expect(fleet.origin.requests(path: path).count == 2)
        try await fleet.expectChildrenExited()
    }

    private static func purgeChild(_ child: FleetChildEnvironment) async throws {
        let running = try await child.store()
        let instance = try FleetInstance(baseURL: child.origin, store: running.store)
        let key = FleetKeys.describe("1|public|GET \(child.origin)/item/5").key
        child.say("ready")
        func fetch() async throws {
            #expect(try await instance.client.send(FleetText(path: "item/5")) == "item 5")
            await instance.cache.waitForPendingWrites()
            #expect(await instance.storage.flush())
        }
        try await child.waitFor("fill")
        if child.index == 0 { try await fetch() }
        child.say("fill")
        try await child.waitFor("read")
        if child.index != 0 { try await fetch() }
        child.say("read", ["secondTierHits": instance.storage.statistics.secondTierHits, "local": await instance.local.count])
        try await child.waitFor("purge")
        let started = ContinuousClock.now
        if child.index == 0 {
            await instance.cache.invalidate(.keyPrefix("GET \(child.origin)/item/"))
            #expect(await instance.storage.flush())
        }
        #expect(await eventually { await instance.local.count == 0 })
        let after = ContinuousClock.now - started
        let stored = try await running.store.read(key)
        child.say("purge", ["local": await instance.local.count, "stored": stored == nil ? "absent" : "present", "after": milliseconds(after)])
        try await child.waitFor("refetch")
        if child.index == 1 { try await fetch() }
        child.say("refetch", ["misses": instance.storage.statistics.misses])
        try await child.waitFor("reread")
        if child.index != 1 { try await fetch() }
        child.say("reread", ["secondTierHits": instance.storage.statistics.secondTierHits])
        await child.finish(running)
    }

    // MARK: c. limit and SIGKILL

    @Test func aFleetLimitOfEightHoldsAcrossProcessesAndADeadProcessesSlotsComeBack() async throws {
        if let child = FleetChildEnvironment.current { return try await Self.limitChild(child) }
        let fleet = try await FleetRun(test: "aFleetLimitOfEightHoldsAcrossProcessesAndADeadProcessesSlotsComeBack")
        defer { fleet.end() }
        let observer = try await RunningStore.start(schema: fleet.schema, url: fleet.database)
        _ = try await fleet.reports("ready")
        let path = "/slow/0"
        fleet.phase.set("go")
        #expect(await eventually { fleet.origin.peakInFlight(path: path) >= 8 }, "three processes reach the fleet limit")
        // Process 0 holds slots (its lease row says so) and its calls are running: SIGKILL.
        #expect(await eventually { (try? await Self.slots(of: "child-0", in: observer.store)) ?? 0 > 0 })
        let peakBefore = fleet.origin.peakInFlight(path: path)
        let held = (try? await Self.slots(of: "child-0", in: observer.store)) ?? 0
        #expect(fleet.children[0].kill(SIGKILL))
        let killed = ContinuousClock.now
        #expect(await eventually { fleet.children[0].termination != nil })
        #expect(fleet.children[0].termination == SpawnedProcess.Termination(reason: .uncaughtSignal, status: SIGKILL))
        // The dead process's lease runs out (2 s) and a renewal by the others removes it.
        #expect(await eventually { (try? await Self.holders(in: observer.store)) == ["child-1", "child-2"] })
        let leaseGone = ContinuousClock.now - killed
        fleet.origin.resetStatistics()
        #expect(await eventually { fleet.origin.peakInFlight(path: path) >= 8 }, "the two left reach 8 again: the dead process's slots came back")
        let regained = ContinuousClock.now - killed
        let peakAfter = fleet.origin.peakInFlight(path: path)
        fleet.phase.set("stop")
        let done = try await fleet.reports("done", of: [1, 2])
        #expect(peakBefore == 8, "never more than 8 calls at once across three processes")
        #expect(peakAfter == 8, "never more than 8 calls at once across the two left")
        #expect(done.map { $0["failures"] } == ["0", "0"])
        #expect(done.allSatisfy { Int($0["calls"] ?? "") ?? 0 > 0 })
        print(
            "fleet (3 processes, limit 8, lease TTL 2 s): peak \(peakBefore) with three, SIGKILL of one holding \(held) slots; its lease row gone after \(milliseconds(leaseGone)), the two left at 8 after \(milliseconds(regained)); peak \(peakAfter); calls \(done.map { $0["calls"] ?? "?" })"
        )
        await observer.stop()
        try await fleet.expectChildrenExited(except: [0])
    }

    static func slots(of holder: String, in store: PostgresFleetStore) async throws -> Int {
        var slots = 0
        for try await held in try await store.client.query("SELECT slots FROM curlew_fleet_leases WHERE name = 'partner' AND holder = \(holder)").decode(Int.self) {
            slots += held
        }
        return slots
    }

    static func holders(in store: PostgresFleetStore) async throws -> [String] {
        var holders: [String] = []
        for try await holder in try await store.client.query("SELECT holder FROM curlew_fleet_leases WHERE name = 'partner' ORDER BY holder").decode(String.self) {
            holders.append(holder)
        }
        return holders
    }

    private static func limitChild(_ child: FleetChildEnvironment) async throws {
        let running = try await child.store()
        var configuration = FleetLimiterTests.configuration()
        configuration.leaseTimeToLive = .seconds(2)
        configuration.instance = "child-\(child.index)"
        let queues = QueueActor()
        let limiter = try FleetLimiter(queues: queues, store: running.store, limits: ["partner": 8], configuration: configuration)
        let limiting = Task { try await limiter.run() }
        let client = APIClient(configuration: ClientConfiguration(baseURL: child.origin), queues: queues)
        child.say("ready")
        try await child.waitFor("go")
        let tally = await withTaskGroup(of: (calls: Int, failures: Int).self) { group in
            for _ in 0..<20 {
                group.addTask {
                    var tally = (calls: 0, failures: 0)
                    while child.currentPhase != "stop" {
                        do {
                            _ = try await client.send(FleetText(path: "slow/0", policy: .networkOnly, queue: "partner"))
                            tally.calls += 1
                        } catch {
                            tally.failures += 1
                        }
                    }
                    return tally
                }
            }
            return await group.reduce(into: (calls: 0, failures: 0)) {
                $0.calls += $1.calls
                $0.failures += $1.failures
            }
        }
        let status = limiter.status(of: "partner")
        child.say("done", ["calls": tally.calls, "failures": tally.failures, "leases": status?.leases ?? 0, "fallbacks": status?.fallbacks ?? -1])
        limiting.cancel()
        _ = await limiting.result
        await child.finish(running)
    }

    // MARK: A dead holder's single-flight lock

    @Test func aSingleFlightLockOfAKilledProcessIsFreeLongBeforeItsTimeToLive() async throws {
        if let child = FleetChildEnvironment.current { return try await Self.lockHoldingChild(child) }
        let fleet = try await FleetRun(test: "aSingleFlightLockOfAKilledProcessIsFreeLongBeforeItsTimeToLive", children: 1)
        defer { fleet.end() }
        let observer = try await RunningStore.start(schema: fleet.schema, url: fleet.database)
        await observer.store.waitUntilListening()
        let key = FleetKeys.describe("1|public|GET \(fleet.origin.baseURL)/item/3").key
        _ = try await fleet.reports("locked", of: [0])
        #expect(try await observer.store.tryLock(key, owner: "probe", ttl: .seconds(600)) == false, "the child holds the lock")
        // Ten callers of this process miss and wait for the child's fetch — for up to ten minutes,
        // as long as the child's lock lasts.
        var configuration = FleetCacheStorage.Configuration.generousForTests
        var flight = FleetCacheStorage.SingleFlight()
        flight.wait = .seconds(600)
        flight.lockTimeToLive = .seconds(600)
        configuration.singleFlight = flight
        let instance = try FleetInstance(baseURL: fleet.origin.baseURL, store: observer.store, configuration: configuration)
        let answers = Task {
            try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<10 { group.addTask { try await instance.client.send(FleetText(path: "item/3")) } }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
        }
        #expect(await eventually { instance.storage.waitingCallers == 10 })
        #expect(fleet.origin.requests(path: "/item/3").isEmpty)
        #expect(fleet.children[0].kill(SIGKILL))
        let killed = ContinuousClock.now
        // PostgreSQL ends the dead process's session, releasing its liveness lock: the waiting
        // instance finds the lock free (not timed out: wait and lock last 600 s) and its callers
        // fetch for themselves.
        let fetched = try await answers.value
        let freed = ContinuousClock.now - killed
        #expect(fetched == Array(repeating: "item 3", count: 10))
        let statistics = instance.storage.statistics
        #expect(statistics.singleFlightTimeouts == 0, "no caller waited out its 600 s")
        #expect(statistics.singleFlightLeads == 0)
        #expect(statistics.misses == 10, "the abandoned flight's callers each fetched")
        #expect(fleet.origin.requests(path: "/item/3").count == 10)
        // The kernel closes a dying process's sockets (PostgreSQL sees the session end) a moment
        // before the process can be reaped.
        #expect(await eventually { fleet.children[0].termination != nil })
        #expect(fleet.children[0].termination == SpawnedProcess.Termination(reason: .uncaughtSignal, status: SIGKILL))
        print("fleet (2 processes): a single-flight lock with a 600 s time to live, its holder SIGKILLed: the waiting callers were answered after \(milliseconds(freed))")
        await observer.stop()
    }

    private static func lockHoldingChild(_ child: FleetChildEnvironment) async throws {
        let running = try await child.store()
        let key = FleetKeys.describe("1|public|GET \(child.origin)/item/3").key
        #expect(try await running.store.tryLock(key, owner: "child", ttl: .seconds(600)))
        child.say("locked")
        // Held until the parent kills this process.
        try await child.waitFor("never")
    }

    // MARK: d. PostgreSQL stopped mid-run

    @Test func postgresStoppedMidRunInAFleetFailsNoCallAndReplaysTheWrites() async throws {
        if let child = FleetChildEnvironment.current { return try await Self.outageChild(child) }
        // A PostgreSQL of this test's own: stopping it disturbs no other test.
        let postgres = PrivatePostgres(name: "fleet-outage")
        let database = try await postgres.start()
        do {
            let fleet = try await FleetRun(test: "postgresStoppedMidRunInAFleetFailsNoCallAndReplaysTheWrites", database: database)
            defer { fleet.end() }
            func calls() -> Int { fleet.origin.requests.filter { $0.path.hasPrefix("/item/") }.count }
            // Whether every child has made `count` calls knowing the phase (each call carries it).
            func everyChild(made count: Int, in phase: String) -> Bool {
                let requests = fleet.origin.requests.filter { $0.header("X-Phase") == phase }
                return (0..<3).allSatisfy { index in requests.filter { $0.path.hasPrefix("/item/c\(index)-") }.count >= count }
            }
            _ = try await fleet.reports("ready")
            fleet.phase.set("before")
            #expect(await eventually { calls() >= 300 })
            // Calls made while `pg_ctl stop` runs count as the outage's ("stopping"); those made
            // once it has returned find PostgreSQL gone ("down").
            fleet.phase.set("stopping")
            try await postgres.run("down")
            fleet.phase.set("down")
            #expect(await eventually { everyChild(made: 30, in: "down") })
            try await postgres.run("up")
            fleet.phase.set("up")
            #expect(await eventually { everyChild(made: 30, in: "up") })
            fleet.phase.set("verify")
            let verified = try await fleet.reports("verified")
            #expect(verified.map { $0["failures"] } == ["0", "0", "0"], "no call failed")
            #expect(verified.map { $0["flushed"] } == ["true", "true", "true"], "every queued write reached PostgreSQL once it was back")
            #expect(verified.map { $0["dropped"] } == ["0", "0", "0"])
            #expect(
                verified.allSatisfy { $0["sinceOutage"] != nil && $0["sinceOutage"] == $0["secondTierHits"] },
                "each process reads every answer it fetched since the outage began (replayed writes included) from PostgreSQL")
            #expect(verified.allSatisfy { Int($0["downCalls"] ?? "") ?? 0 > 0 && Int($0["failOpen"] ?? "") ?? 0 > 0 })
            #expect(calls() == verified.compactMap { Int($0["calls"] ?? "") }.reduce(0, +), "one origin request per call: the reads after the outage came from PostgreSQL")
            for report in verified {
                print(
                    "fleet (3 processes, PostgreSQL stopped mid-run, soft timeout 50 ms): process \(report["index"] ?? "?"): calls \(report["calls"] ?? "?"), failed 0, fail-open \(report["failOpen"] ?? "?") (\(report["failOpenBefore"] ?? "?") of the \(report["beforeCalls"] ?? "?") calls before the outage), breaker openings \(report["breakerOpenings"] ?? "?"), fetched while it was down or after and read back \(report["secondTierHits"] ?? "?")/\(report["sinceOutage"] ?? "?"), kept from before the crash \(report["keptFromBefore"] ?? "?"); call time p50/p99 before \(report["before"] ?? "?"), PostgreSQL down \(report["down"] ?? "?") (\(report["downCalls"] ?? "?") calls), back \(report["up"] ?? "?")"
                )
            }
            try await fleet.expectChildrenExited()
            print("fleet (3 processes, PostgreSQL stopped mid-run): store shut down within 10 s afterwards: \(fleet.children.map { $0.report("stopped")?["clean"] ?? "?" })")
        } catch {
            _ = try? await postgres.run("stop")
            throw error
        }
        try await postgres.run("stop")
    }

    private static func outageChild(_ child: FleetChildEnvironment) async throws {
        let running = try await child.store()
        var configuration = FleetCacheStorage.Configuration()
        configuration.softTimeout = .milliseconds(50)
        configuration.writeTimeout = .milliseconds(500)
        configuration.breakDuration = .milliseconds(200)
        configuration.singleFlight = nil
        // The outage lasts as long as `pg_ctl` takes to stop and start again on a loaded machine:
        // room for every write it queues (none may be dropped here).
        configuration.maximumPendingWrites = 100_000
        let instance = try FleetInstance(baseURL: child.origin, store: running.store, configuration: configuration)
        child.say("ready")
        try await child.waitFor("before")
        let next = Ticket()
        let failOpenBeforeOutage = Task {
            // "stopping" lasts as long as `pg_ctl stop`: a poll may see only a later phase.
            try? await child.waitFor("stopping", orAnyOf: ["down", "up", "verify"])
            return instance.storage.statistics.failOpenReads
        }
        let timings = await withTaskGroup(of: [(n: Int, phase: String, time: Duration, failed: Bool)].self) { group in
            for _ in 0..<4 {
                group.addTask {
                    var timings: [(n: Int, phase: String, time: Duration, failed: Bool)] = []
                    while true {
                        let phase = child.currentPhase
                        guard phase != "verify" else { return timings }
                        let n = next.take()
                        let started = ContinuousClock.now
                        // The phase the call was made in goes with it, so the parent counts the calls
                        // each phase really had (a short phase can pass between two polls).
                        let answer = try? await instance.client.send(FleetText(path: "item/c\(child.index)-\(n)", headers: ["X-Phase": phase]))
                        timings.append((n, phase, ContinuousClock.now - started, answer != "item c\(child.index)-\(n)"))
                    }
                }
            }
            return await group.reduce(into: []) { $0 += $1 }
        }
        await instance.cache.waitForPendingWrites()
        let flushed = await instance.storage.flush(timeout: .seconds(60))
        let statistics = instance.storage.statistics
        // Recovered without a restart: a fresh first tier on the same store reads every answer
        // fetched once PostgreSQL was down — the writes replayed after the outage and those made
        // since. (Answers stored before may be gone: `pg_ctl stop -m immediate` is a crash, and
        // PostgreSQL empties UNLOGGED tables when it recovers from one.)
        let reader = try FleetInstance(baseURL: child.origin, store: running.store)
        let calls = next.taken
        let sinceOutage = timings.filter { $0.phase == "down" || $0.phase == "up" }.map { $0.n }
        let fetchedSince = Set(sinceOutage)
        for n in sinceOutage {
            #expect(try await reader.client.send(FleetText(path: "item/c\(child.index)-\(n)")) == "item c\(child.index)-\(n)")
        }
        var keptFromBefore = 0
        for (n, _, _, _) in timings where !fetchedSince.contains(n) {
            if try await running.store.read(FleetKeys.describe("1|public|GET \(child.origin)/item/c\(child.index)-\(n)").key) != nil { keptFromBefore += 1 }
        }
        func percentiles(_ phases: Set<String>) -> String {
            let times = timings.filter { phases.contains($0.phase) }.map(\.time).sorted()
            guard !times.isEmpty else { return "-" }
            return milliseconds(times[times.count / 2]) + "/" + milliseconds(times[min(times.count - 1, times.count * 99 / 100)])
        }
        child.say(
            "verified",
            [
                "calls": calls, "failures": timings.filter { $0.failed }.count, "sinceOutage": sinceOutage.count, "keptFromBefore": keptFromBefore, "flushed": flushed, "failOpen": statistics.failOpenReads,
                "breakerOpenings": statistics.breakerOpenings, "dropped": statistics.droppedWrites, "secondTierHits": reader.storage.statistics.secondTierHits,
                "downCalls": timings.filter { $0.phase == "down" || $0.phase == "stopping" }.count,
                "beforeCalls": timings.filter { $0.phase == "before" }.count, "failOpenBefore": await failOpenBeforeOutage.value,
                "before": percentiles(["before"]), "down": percentiles(["stopping", "down"]), "up": percentiles(["up"]),
            ])
        await child.finish(running)
    }
}

/// Hands out 0, 1, 2, … to concurrent workers. `Sendable` through its atomic.
final class Ticket: Sendable {
    private let next = Atomic<Int>(0)
    func take() -> Int { next.add(1, ordering: .relaxed).oldValue }
    var taken: Int { next.load(ordering: .relaxed) }
}

/// A duration in milliseconds with one decimal, e.g. `12.3ms`.
func milliseconds(_ duration: Duration) -> String {
    String(format: "%.1fms", Double(nanoseconds(duration)) / 1_000_000)
}

/// A PostgreSQL of its own (`CURLEW_POSTGRES_NAME=<name> bash scripts/postgres.sh`), for a test
/// that stops it: the other tests, which run in parallel, keep theirs.
struct PrivatePostgres {
    let name: String

    @discardableResult
    func run(_ command: String) async throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        var environment = ProcessInfo.processInfo.environment
        environment["CURLEW_POSTGRES_NAME"] = name
        let (status, output) = try await SpawnedProcess.run(path: "/bin/bash", arguments: [root.appendingPathComponent("scripts/postgres.sh").path, command], environment: environment)
        try #require(status == 0, "postgres.sh \(command): \(output.suffix(2000))")
        return output
    }

    /// Starts it; returns its URL.
    func start() async throws -> String {
        let output = try await run("start")
        let line = try #require(output.split(separator: "\n").first { $0.hasPrefix("export CURLEW_POSTGRES_URL=") }, "\(output.suffix(2000))")
        let url = line.dropFirst("export CURLEW_POSTGRES_URL=".count).split(separator: " ").first.map(String.init)
        return try #require(url)
    }
}

/// What a child process is told: its test (the role), its index, the database, schema and origin.
struct FleetChildEnvironment: Sendable {
    static let variable = "CURLEW_FLEET_CHILD"

    let index: Int
    let database: String
    let schema: String
    let origin: String
    /// The parent's phase as last polled; guarded by its mutex.
    private let phase: PhaseBox

    /// The child's environment, or `nil` in the parent.
    static let current: FleetChildEnvironment? = {
        let environment = ProcessInfo.processInfo.environment
        guard let value = environment[variable] else { return nil }
        let parts = value.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 4, let index = Int(parts[0]) else { return nil }
        return FleetChildEnvironment(index: index, database: parts[1], schema: parts[2], origin: parts[3], phase: PhaseBox())
    }()

    static func value(index: Int, database: String, schema: String, origin: String) -> String {
        "\(index) \(database) \(schema) \(origin)"
    }

    /// Prints `FLEET <index> <step> k=v …` for the parent.
    func say(_ step: String, _ values: [String: any CustomStringConvertible] = [:]) {
        let pairs = values.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value.description.replacingOccurrences(of: " ", with: "_"))" }
        print((["FLEET", String(index), step] + pairs).joined(separator: " "))
        fflush(nil)
    }

    /// The phase as last polled (``waitFor(_:)`` or the poller it starts keep it fresh).
    var currentPhase: String { phase.value }

    /// Polls the parent's phase until it is `wanted`, or one of `later` for a phase so short the
    /// poller may never see it (and keeps polling in the background).
    func waitFor(_ wanted: String, orAnyOf later: Set<String> = []) async throws {
        phase.startPolling(origin)
        let reached = await eventually(within: 150) { phase.value == wanted || later.contains(phase.value) }
        try #require(reached, "phase \(wanted) never came (last: \(phase.value))")
    }

    /// Stops the store, waiting at most 10 s, and says whether it stopped (`stopped clean=…`).
    /// After a PostgreSQL outage, postgres-nio 1.33.2 was seen to leave requests made during it
    /// waiting for good; a store whose shutdown waits for them must not keep the child from
    /// exiting — the parent reports it.
    func finish(_ running: RunningStore) async {
        let stopped = await withSoftTimeout(.seconds(10)) { await running.stop() }
        if case .answered = stopped { say("stopped", ["clean": true]) } else { say("stopped", ["clean": false]) }
    }

    /// A running store on the fleet's schema, listening and migrated. First lowers the child's
    /// priority (nice 10), as the other child-process tests do: the rest of a parallel suite,
    /// timing-sensitive tests included, goes first on a two-core machine.
    func store() async throws -> RunningStore {
        _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        let running = try await RunningStore.start(schema: schema, url: database)
        await running.store.waitUntilListening()
        try await running.store.migrateIfNeeded()
        return running
    }
}

/// A child's copy of the parent's phase, refreshed from the origin's `/control` every 5 ms by one
/// task. `Sendable` through the mutex guarding the text and whether the poller runs.
final class PhaseBox: Sendable {
    private let state = Mutex((value: "", polling: false))

    var value: String { state.withLock { $0.value } }

    func startPolling(_ origin: String) {
        let start = state.withLock { state -> Bool in
            defer { state.polling = true }
            return !state.polling
        }
        guard start else { return }
        let client = APIClient(baseURL: origin)
        Task {
            while true {
                if let phase = try? await client.send(FleetText(path: "control", policy: .networkOnly)) {
                    state.withLock { $0.value = phase }
                }
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
    }
}

/// The parent's phase, answered by the origin's `/control`. `Sendable` through its mutex.
final class FleetPhase: Sendable {
    private let value = Mutex("")
    func set(_ phase: String) { value.withLock { $0 = phase } }
    var current: String { value.withLock { $0 } }
}

/// The parent's side: the origin, the database schema and three children.
final class FleetRun: Sendable {
    let origin: LoopbackServer
    let phase: FleetPhase
    let gate: Gate
    let schema: String
    let database: String
    let children: [FleetChild]

    init(test: String, suite: String = "FleetMultiProcessTests", children count: Int = 3, gated: Bool = false, database: String? = nil) async throws {
        let phase = FleetPhase()
        let gate = Gate()
        let schema = RunningStore.schema()
        self.phase = phase
        self.gate = gate
        self.schema = schema
        var router = LoopbackRouter()
        router.on("GET", "/control") { _, _ in .text(phase.current) }
        router.on("GET", "/item/{n}") { request, parameters in
            while gated, !gate.isOpen, !request.connection.isClosed { try? await Task.sleep(for: .milliseconds(5)) }
            return ServerResponse(headers: [("Content-Type", "text/plain"), ("Cache-Control", "max-age=300")], body: Array("item \(parameters["n"] ?? "")".utf8))
        }
        router.on("GET", "/slow/{n}") { _, parameters in
            try? await Task.sleep(for: .milliseconds(30))
            return .text("slow \(parameters["n"] ?? "")")
        }
        let origin = try await LoopbackServer.start(router: router)
        self.origin = origin
        let url = try database ?? RunningStore.url()
        self.database = url
        children = try (0..<count).map { index in
            try FleetChild(
                filter: "\(suite)/\(test)",
                environment: [FleetChildEnvironment.variable: FleetChildEnvironment.value(index: index, database: url, schema: schema, origin: origin.baseURL)])
        }
    }

    /// Each child's `step` line (as `k=v` pairs with `index`), once all of `indices` said it.
    func reports(_ step: String, of indices: [Int] = [0, 1, 2]) async throws -> [[String: String]] {
        let said = await eventually(within: 150) { indices.allSatisfy { self.children[$0].report(step) != nil || !self.children[$0].isRunning } }
        var reports: [[String: String]] = []
        for index in indices {
            let child = children[index]
            let report = try #require(child.report(step), "child \(index) never said \(step) (said so far: \(said)); its output:\n\(child.output.suffix(4000))")
            reports.append(report)
        }
        return reports
    }

    /// Each child (but `except`) ends on its own with status 0.
    func expectChildrenExited(except: Set<Int> = []) async throws {
        for (index, child) in children.enumerated() where !except.contains(index) {
            #expect(await eventually { !child.isRunning })
            #expect(child.termination == SpawnedProcess.Termination(reason: .exit, status: 0), "child \(index)'s output:\n\(child.output.suffix(4000))")
        }
    }

    /// Ends what still runs.
    func end() {
        for child in children { child.kill(SIGKILL) }
        let origin = origin
        Task { await origin.shutdown() }
    }
}

/// The test binary run again with only `filter` (posix_spawn, not Foundation's Process: see
/// SpawnedProcess), its output readable while it runs.
final class FleetChild: Sendable {
    /// Guards the output read so far.
    private let collected = Mutex("")
    /// The child (`Sendable`: its own lock guards what it knows).
    private let process: SpawnedProcess

    init(filter: String, environment extra: [String: String]) throws {
        let pipe = Pipe()
        process = try SpawnedProcess(
            path: "/proc/self/exe", arguments: ["--testing-library", "swift-testing", "--filter", filter],
            standardOutput: pipe.fileHandleForWriting.fileDescriptor, mergesStandardError: true,
            environment: ProcessInfo.processInfo.environment.merging(extra) { $1 })
        try pipe.fileHandleForWriting.close()
        let reader = pipe.fileHandleForReading
        Thread.detachNewThread { [self] in
            while true {
                let data = reader.availableData
                if data.isEmpty { break }
                self.collected.withLock { $0 += String(decoding: data, as: UTF8.self) }
            }
        }
    }

    var output: String { collected.withLock { $0 } }
    var isRunning: Bool { process.isRunning }
    var termination: SpawnedProcess.Termination? { process.terminationIfEnded }

    @discardableResult
    func kill(_ signal: Int32) -> Bool { process.kill(signal) }

    /// The `k=v` pairs (and `index`) of its first `FLEET <index> <step>` line.
    func report(_ step: String) -> [String: String]? {
        for line in output.split(separator: "\n") {
            let words = line.split(separator: " ")
            guard words.count >= 3, words[0] == "FLEET", words[2] == step else { continue }
            var pairs = ["index": String(words[1])]
            for word in words.dropFirst(3) {
                guard let equals = word.firstIndex(of: "=") else { continue }
                pairs[String(word[..<equals])] = String(word[word.index(after: equals)...])
            }
            return pairs
        }
        return nil
    }
}
