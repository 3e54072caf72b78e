import Curlew
@testable import CurlewFleet
import Foundation
import InMemoryTracing
import LoopbackServer
import Synchronization
import Testing
import TestSupport

@Suite("Fleet cache tiers (in-memory store)", .timingSensitive)
struct FleetCacheTests {
    @Test func anotherInstanceIsServedFromTheSecondTier() async throws {
        let server = try await startOrigin()
        let store = InMemoryFleetStore()
        let a = try FleetInstance(baseURL: server.baseURL, store: store)
        let b = try FleetInstance(baseURL: server.baseURL, store: store)
        #expect(try await a.client.send(FleetText(path: "item/1")) == "item 1")
        await a.cache.waitForPendingWrites()
        #expect(await a.storage.flush())
        #expect(try await b.client.send(FleetText(path: "item/1")) == "item 1")
        #expect(try await b.client.send(FleetText(path: "item/1")) == "item 1")
        #expect(server.requestCount == 1)
        #expect(b.storage.statistics.secondTierHits == 1)
        #expect(b.storage.statistics.firstTierHits == 1)
        #expect(await b.local.count == 1)
        await server.shutdown()
    }

    /// The fleet's fail-safe: instance A fetched while the origin was up; the origin goes away; B,
    /// which never saw the answer, serves it from the second tier under `networkFirst` — the
    /// app's consent to stale answers offline holds across the fleet, not only per instance.
    @Test func anOriginOutageIsBridgedFromWhatAnotherInstanceFetched() async throws {
        let server = try await startOrigin()
        let store = InMemoryFleetStore()
        let a = try FleetInstance(baseURL: server.baseURL, store: store)
        let b = try FleetInstance(baseURL: server.baseURL, store: store)
        let call = FleetText(path: "item/5", policy: .networkFirst(staleFor: .hours(1)))
        #expect(try await a.client.send(call) == "item 5")
        await a.cache.waitForPendingWrites()
        #expect(await a.storage.flush())
        await server.shutdown()
        let answer = try await b.client.response(for: call)
        #expect(answer.value == "item 5")
        #expect(answer.source == .cache)
        #expect(server.requestCount == 1)
        #expect(b.storage.statistics.secondTierHits == 1)
        // Without a stored answer anywhere, the outage is the caller's error.
        await #expect(throws: CurlewError.self) { try await b.client.send(FleetText(path: "item/6", policy: .networkFirst(staleFor: .hours(1)))) }
    }

    /// Store reads and single-flight locks are spans with their outcome: a miss takes the lock
    /// and reads once more before fetching (a fetch that just ended elsewhere would be there),
    /// another instance's read is a hit.
    @Test func storeReadsAndLocksAreSpans() async throws {
        let server = try await startOrigin()
        let store = InMemoryFleetStore()
        let tracer = InMemoryTracer()
        var configuration = FleetCacheStorage.Configuration.generousForTests
        configuration.tracer = tracer
        let a = try FleetInstance(baseURL: server.baseURL, store: store, configuration: configuration)
        let b = try FleetInstance(baseURL: server.baseURL, store: store, configuration: configuration)
        #expect(try await a.client.send(FleetText(path: "item/9")) == "item 9")
        await a.cache.waitForPendingWrites()
        #expect(await a.storage.flush())
        #expect(try await b.client.send(FleetText(path: "item/9")) == "item 9")
        let spans = tracer.finishedSpans.map { ($0.operationName, $0.attributes["curlew.fleet.outcome"]?.toSpanAttribute()) }
        #expect(spans.map(\.0) == ["fleet read", "fleet lock", "fleet read", "fleet read"])
        #expect(spans.map(\.1) == ["absent", "taken", "absent", "hit"])
        await server.shutdown()
    }

    @Test func credentialsAndVaryStayIsolatedInTheSecondTier() async throws {
        var router = LoopbackRouter()
        router.on("GET", "/me") { request, _ in
            ServerResponse(
                headers: [("Cache-Control", "private, max-age=300"), ("Vary", "Accept-Language")],
                body: Array("\(request.header("Authorization") ?? "-") \(request.header("Accept-Language") ?? "-")".utf8))
        }
        let server = try await LoopbackServer.start(router: router)
        let store = InMemoryFleetStore()
        let a = try FleetInstance(baseURL: server.baseURL, store: store)
        let b = try FleetInstance(baseURL: server.baseURL, store: store)
        let alice = FleetText(path: "me", headers: ["Authorization": "Bearer alice", "Accept-Language": "en"])
        #expect(try await a.client.send(alice) == "Bearer alice en")
        await a.cache.waitForPendingWrites()
        #expect(await a.storage.flush())
        // Another credential, then another language: neither is alice's English answer.
        #expect(try await b.client.send(FleetText(path: "me", headers: ["Authorization": "Bearer bob", "Accept-Language": "en"])) == "Bearer bob en")
        #expect(try await b.client.send(FleetText(path: "me", headers: ["Authorization": "Bearer alice", "Accept-Language": "fr"])) == "Bearer alice fr")
        #expect(server.requestCount == 3)
        // The same credential and language: served from the second tier.
        #expect(try await b.client.send(alice) == "Bearer alice en")
        #expect(server.requestCount == 3)
        await server.shutdown()
    }

    @Test(arguments: ["request", "prefix", "all"])
    func aPurgeOnOneInstanceEvictsEveryFirstTier(kind: String) async throws {
        let server = try await startOrigin()
        let store = InMemoryFleetStore()
        let instances = try (0..<3).map { _ in try FleetInstance(baseURL: server.baseURL, store: store) }
        for instance in instances { _ = try await instance.client.send(FleetText(path: "item/7")) }
        for instance in instances {
            await instance.cache.waitForPendingWrites()
            #expect(await instance.storage.flush())
            #expect(await instance.local.count == 1)
        }
        let requestsBefore = server.requestCount
        let target: CacheInvalidation =
            switch kind {
            case "request": .request("GET \(server.baseURL)/item/7")
            case "prefix": .keyPrefix("GET \(server.baseURL)/item/")
            default: .all
            }
        await instances[0].cache.invalidate(target)
        #expect(await instances[0].storage.flush())
        for instance in instances {
            #expect(await eventually { await instance.local.count == 0 })
        }
        #expect(await store.keys.isEmpty)
        _ = try await instances[2].client.send(FleetText(path: "item/7"))
        #expect(server.requestCount == requestsBefore + 1)
        await server.shutdown()
    }

    @Test func anAccountPurgeReachesTheOtherInstances() async throws {
        var router = LoopbackRouter()
        router.on("GET", "/mine") { _, _ in ServerResponse(headers: [("Cache-Control", "max-age=300")], body: Array("mine".utf8)) }
        let server = try await LoopbackServer.start(router: router)
        let store = InMemoryFleetStore()
        func instance() throws -> (FleetCacheStorage, MemoryCacheStorage, ResponseCache, APIClient) {
            let local = MemoryCacheStorage()
            let storage = try FleetCacheStorage(local: local, store: store, configuration: .generousForTests)
            let cache = ResponseCache(storage: storage, credentials: .provider { "alice" })
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [cache]))
            return (storage, local, cache, client)
        }
        let a = try instance()
        let b = try instance()
        _ = try await a.3.send(FleetText(path: "mine"))
        _ = try await b.3.send(FleetText(path: "mine"))
        await a.2.waitForPendingWrites()
        await b.2.waitForPendingWrites()
        #expect(await b.1.count == 1)
        await a.2.invalidate(.account("alice"))
        #expect(await a.0.flush())
        #expect(await eventually { await b.1.count == 0 })
        #expect(await store.keys.isEmpty)
        await server.shutdown()
    }

    @Test func threeInstancesOfAHundredCallersFetchOnce() async throws {
        let gate = Gate()
        let server = try await startOrigin(gate: gate)
        let store = InMemoryFleetStore()
        let instances = try (0..<3).map { _ in try FleetInstance(baseURL: server.baseURL, store: store) }
        let results = Task {
            try await withThrowingTaskGroup(of: String.self) { group in
                for instance in instances {
                    for _ in 0..<100 { group.addTask { try await instance.client.send(FleetText(path: "item/42")) } }
                }
                return try await group.reduce(into: [String]()) { $0.append($1) }
            }
        }
        #expect(await eventually { server.requestCount >= 1 })
        // Every caller has missed and waits before the origin answers — one leader, the rest in
        // flights — so none of them can arrive after the answer (on a loaded machine some of the
        // 300 tasks start late; what a latecomer does is another test's question).
        #expect(
            await eventually {
                let leads = instances.map(\.storage.statistics).reduce(0) { $0 + $1.singleFlightLeads }
                return leads + instances.reduce(0) { $0 + $1.storage.waitingCallers } == 300
            })
        #expect(server.requestCount == 1)
        gate.release()
        let answers = try await results.value
        #expect(answers.count == 300)
        #expect(Set(answers) == ["item 42"])
        #expect(server.requestCount == 1)
        let stats = instances.map(\.storage.statistics)
        #expect(stats.reduce(0) { $0 + $1.singleFlightLeads } == 1)
        #expect(stats.reduce(0) { $0 + $1.singleFlightTimeouts } == 0)
        await server.shutdown()
    }

    /// The fetching instance's answer is a 503 with `no-store`: nothing reaches the store, so every
    /// caller waiting on it — on its own instance and on the others — is released at once (no
    /// single-flight wait runs out: the wait here is 60 s), and no lock stays held.
    @Test func aFetchThatStoresNothingReleasesEveryWaiterAndTheLock() async throws {
        let gate = Gate()
        let served = Mutex(0)
        var router = LoopbackRouter()
        router.on("GET", "/flaky/{n}") { request, _ in
            let first = served.withLock { count in
                count += 1
                return count == 1
            }
            guard first else { return ServerResponse(headers: [("Cache-Control", "max-age=300")], body: Array("fresh".utf8)) }
            while !gate.isOpen, !request.connection.isClosed { try? await Task.sleep(for: .milliseconds(5)) }
            return ServerResponse(status: 503, headers: [("Cache-Control", "no-store")], body: Array("busy".utf8))
        }
        let server = try await LoopbackServer.start(router: router)
        let store = InMemoryFleetStore()
        let instances = try (0..<3).map { _ in try FleetInstance(baseURL: server.baseURL, store: store) }
        let results = Task {
            await withTaskGroup(of: String?.self) { group in
                for instance in instances {
                    for _ in 0..<10 { group.addTask { try? await instance.client.send(FleetText(path: "flaky/7")) } }
                }
                return await group.reduce(into: [String?]()) { $0.append($1) }
            }
        }
        #expect(
            await eventually {
                let stats = instances.map(\.storage.statistics)
                return stats.reduce(0) { $0 + $1.singleFlightLeads } == 1 && server.requestCount == 1
            })
        // Everyone but the fetching caller waits for its answer.
        #expect(await eventually { instances.reduce(0) { $0 + $1.storage.waitingCallers } == 29 })
        gate.release()
        let answers = await results.value
        #expect(answers.count == 30)
        #expect(answers.filter { $0 == nil }.count == 1)
        #expect(answers.filter { $0 == "fresh" }.count == 29)
        // The fetching instance's own waiters all fetch; another instance's waiters fetch too, or
        // take an answer one of those stored meanwhile: every miss is one request to the origin.
        let stats = instances.map(\.storage.statistics)
        let misses = stats.reduce(0) { $0 + $1.misses }
        #expect(misses + stats.reduce(0) { $0 + $1.singleFlightFollows } == 30)
        #expect(server.requestCount == misses)
        #expect(misses >= 10)
        #expect(stats.reduce(0) { $0 + $1.singleFlightTimeouts } == 0)
        #expect(await eventually(within: 5) { await store.lockedKeys.isEmpty })
        await server.shutdown()
    }

    /// A `Vary` variant's miss takes the fleet lock of the variant's key. When its fetch stores
    /// nothing (a `no-store` answer), that lock is given back when the call ends, as the lock of
    /// the call's own key is — not after its time to live (60 s here).
    @Test func aVariantsFetchThatStoresNothingGivesItsLockBack() async throws {
        var router = LoopbackRouter()
        router.on("GET", "/greeting") { request, _ in
            let language = request.header("Accept-Language") ?? "-"
            if language == "fr" { return ServerResponse(status: 503, headers: [("Cache-Control", "no-store")], body: Array("busy".utf8)) }
            return ServerResponse(headers: [("Cache-Control", "max-age=300"), ("Vary", "Accept-Language")], body: Array("hello \(language)".utf8))
        }
        let server = try await LoopbackServer.start(router: router)
        let store = InMemoryFleetStore()
        let a = try FleetInstance(baseURL: server.baseURL, store: store)
        #expect(try await a.client.send(FleetText(path: "greeting", headers: ["Accept-Language": "en"])) == "hello en")
        #expect(await eventually(within: 5) { await store.lockedKeys.isEmpty })
        await #expect(throws: CurlewError.self) { try await a.client.send(FleetText(path: "greeting", headers: ["Accept-Language": "fr"])) }
        #expect(a.storage.statistics.singleFlightLeads == 2, "the base key's miss, then the variant's")
        #expect(await eventually(within: 5) { await store.lockedKeys.isEmpty })
        // A second French call leads the variant's flight again at once, instead of waiting.
        await #expect(throws: CurlewError.self) { try await a.client.send(FleetText(path: "greeting", headers: ["Accept-Language": "fr"])) }
        #expect(a.storage.statistics.singleFlightLeads == 3)
        #expect(a.storage.statistics.singleFlightTimeouts == 0)
        #expect(server.requestCount == 3)
        await server.shutdown()
    }

    /// A caller waiting for another instance's fetch polls the store for the answer. When the
    /// store goes down, the wait ends once the breaker opens and the caller fetches itself,
    /// instead of sitting out the single-flight wait (60 s here).
    @Test func aSingleFlightWaitEndsWhenTheStoreGoesDown() async throws {
        let gate = Gate()
        let server = try await startOrigin(gate: gate)
        let store = InMemoryFleetStore()
        var configuration = FleetCacheStorage.Configuration.generousForTests
        configuration.softTimeout = .seconds(5)
        configuration.breakDuration = .seconds(60)
        let a = try FleetInstance(baseURL: server.baseURL, store: store, configuration: configuration)
        configuration.instance = "b"
        let b = try FleetInstance(baseURL: server.baseURL, store: store, configuration: configuration)
        let leader = Task { try await a.client.send(FleetText(path: "item/3")) }
        #expect(await eventually { a.storage.statistics.singleFlightLeads == 1 && server.requestCount == 1 })
        let follower = Task { try await b.client.send(FleetText(path: "item/3")) }
        #expect(await eventually { b.storage.waitingCallers == 1 })
        await store.setOutage(.failing)
        #expect(await eventually(within: 10) { b.storage.waitingCallers == 0 })
        #expect(await eventually { server.requestCount == 2 }, "the follower fetches itself")
        gate.release()
        #expect(try await leader.value == "item 3")
        #expect(try await follower.value == "item 3")
        #expect(b.storage.statistics.singleFlightTimeouts == 0)
        #expect(b.storage.statistics.breakerOpenings == 1)
        await server.shutdown()
    }

    /// A slow store (every round trip takes at least 250 ms) under a soft timeout of 20 s: a miss
    /// makes three round trips — the read, the lock, the read after it — and they share the one
    /// soft timeout, so the last read is given what the first two left (at most 19.5 s, however
    /// slow the machine), not 20 s again. The soft timeout is long so that a loaded machine does
    /// not spend it before the last read.
    @Test func theRoundTripsOfAMissShareOneSoftTimeout() async throws {
        let server = try await startOrigin()
        let store = SlowStore(delay: .milliseconds(250))
        var configuration = FleetCacheStorage.Configuration.generousForTests
        configuration.softTimeout = .seconds(20)
        let a = try FleetInstance(baseURL: server.baseURL, store: store, configuration: configuration)
        #expect(try await a.client.send(FleetText(path: "item/8")) == "item 8")
        let timeouts = store.readTimeouts
        #expect(timeouts.count == 2)
        if timeouts.count == 2 {
            #expect(timeouts[0] <= .seconds(20))
            #expect(timeouts[1] <= .milliseconds(19_500), "\(timeouts)")
        }
        await server.shutdown()
    }

    /// A `Vary` variant's lookup follows its primary key's: it is given what the primary read
    /// left of the soft timeout (at most 19.75 s after a 250 ms read), not a soft timeout of its
    /// own, so a slow store costs a call one soft timeout however its answer varies.
    @Test func aVariantsLookupSharesThePrimaryKeysSoftTimeout() async throws {
        var router = LoopbackRouter()
        router.on("GET", "/greeting") { request, _ in
            let language = request.header("Accept-Language") ?? "-"
            return ServerResponse(headers: [("Cache-Control", "max-age=300"), ("Vary", "Accept-Language")], body: Array("hello \(language)".utf8))
        }
        let server = try await LoopbackServer.start(router: router)
        let store = SlowStore(delay: .milliseconds(250))
        let a = try FleetInstance(baseURL: server.baseURL, store: store.inner)
        for language in ["en", "fr"] {
            #expect(try await a.client.send(FleetText(path: "greeting", headers: ["Accept-Language": language])) == "hello \(language)")
        }
        await a.cache.waitForPendingWrites()
        #expect(await a.storage.flush())
        var configuration = FleetCacheStorage.Configuration.generousForTests
        configuration.softTimeout = .seconds(20)
        let b = try FleetInstance(baseURL: server.baseURL, store: store, configuration: configuration)
        // The primary key holds the last answer stored (French): English is a variant's lookup.
        #expect(try await b.client.send(FleetText(path: "greeting", headers: ["Accept-Language": "en"])) == "hello en")
        #expect(server.requestCount == 2, "the answer came from the second tier")
        let timeouts = store.readTimeouts
        #expect(timeouts.count == 2, "the primary key, then the variant")
        if timeouts.count == 2 {
            #expect(timeouts[0] <= .seconds(20))
            #expect(timeouts[1] <= .milliseconds(19_750), "\(timeouts)")
        }
        await server.shutdown()
    }
    @Test func aHangingStoreCostsASoftTimeoutAndWritesAreReplayed() async throws {
        let server = try await startOrigin()
        let store = InMemoryFleetStore()
        var configuration = FleetCacheStorage.Configuration()
        configuration.softTimeout = .milliseconds(20)
        configuration.writeTimeout = .milliseconds(50)
        configuration.breakDuration = .milliseconds(100)
        configuration.singleFlight = nil
        let a = try FleetInstance(baseURL: server.baseURL, store: store, configuration: configuration)
        await store.setOutage(.hanging(.seconds(30)))
        for n in 0..<10 {
            #expect(try await a.client.send(FleetText(path: "item/\(n)")) == "item \(n)")
        }
        #expect(server.requestCount == 10)
        let during = a.storage.statistics
        #expect(during.failOpenReads == 10)
        #expect(during.breakerOpenings >= 1)
        #expect(await store.keys.isEmpty)
        await a.cache.waitForPendingWrites()
        // The store comes back: the probe succeeds and the ten writes land.
        await store.setOutage(.none)
        #expect(await a.storage.flush(timeout: .seconds(30)))
        #expect(await store.keys.count == 10)
        let b = try FleetInstance(baseURL: server.baseURL, store: store)
        #expect(try await b.client.send(FleetText(path: "item/3")) == "item 3")
        #expect(server.requestCount == 10)
        await server.shutdown()
    }

    @Test func aFailingStoreOpensTheBreakerAndIsNotAskedUntilTheProbe() async throws {
        let server = try await startOrigin()
        let store = InMemoryFleetStore()
        var configuration = FleetCacheStorage.Configuration()
        configuration.failureThreshold = 3
        configuration.breakDuration = .seconds(3600)
        configuration.singleFlight = nil
        let a = try FleetInstance(baseURL: server.baseURL, store: store, configuration: configuration)
        await store.setOutage(.failing)
        for n in 0..<3 { _ = try await a.client.send(FleetText(path: "item/\(n)")) }
        await a.cache.waitForPendingWrites()
        let callsWhenOpen = await store.calls
        for n in 3..<20 { _ = try await a.client.send(FleetText(path: "item/\(n)")) }
        // The breaker is open for an hour: no further call reached the store.
        #expect(await store.calls == callsWhenOpen)
        #expect(a.storage.statistics.breakerOpenings == 1)
        #expect(a.storage.statistics.failOpenReads == 20)
        #expect(server.requestCount == 20)
        await server.shutdown()
    }

    @Test func invalidationMessagesRoundTrip() {
        for invalidation in [FleetInvalidation.key("a|b"), .prefix("GET x"), .tag("a:1"), .all] {
            #expect(FleetInvalidation(message: invalidation.message) == invalidation)
        }
        #expect(FleetInvalidation(message: "x") == nil)
        #expect(FleetInvalidation(message: "q:1") == nil)
    }
}

/// An in-memory store whose reads and locks take `delay` each, recording the timeout every read
/// was given. `Sendable`: the recorded timeouts are guarded by the mutex.
final class SlowStore: FleetStore {
    let inner = InMemoryFleetStore()
    let delay: Duration
    private let timeouts = Mutex<[Duration]>([])

    init(delay: Duration) { self.delay = delay }

    var readTimeouts: [Duration] { timeouts.withLock { $0 } }

    func read(_ key: String) async throws -> FleetEntry? {
        try await Task.sleep(for: delay)
        return try await inner.read(key)
    }

    func read(_ key: String, timeout: Duration) async throws -> FleetEntry? {
        timeouts.withLock { $0.append(timeout) }
        return try await readUnderSoftTimeout(self, key, timeout)
    }

    func write(_ entry: FleetEntry) async throws { try await inner.write(entry) }
    func invalidate(_ target: FleetInvalidation) async throws { try await inner.invalidate(target) }
    func invalidations() -> AsyncStream<FleetInvalidation> { inner.invalidations() }

    func tryLock(_ key: String, owner: String, ttl: Duration) async throws -> Bool {
        try await Task.sleep(for: delay)
        return try await inner.tryLock(key, owner: owner, ttl: ttl)
    }

    func unlock(_ key: String, owner: String) async throws { try await inner.unlock(key, owner: owner) }

    func lease(_ limit: String, capacity: Int, holder: String, wanted: Int, inUse: Int, ttl: Duration) async throws -> FleetLease {
        try await inner.lease(limit, capacity: capacity, holder: holder, wanted: wanted, inUse: inUse, ttl: ttl)
    }
}
