import Curlew
@testable import CurlewFleet
import Foundation
import InMemoryTracing
import LoopbackServer
import Synchronization
import Testing
import TestSupport
import Tracing

/// The second tier's edges: a probe that could not be sent does not keep the breaker open, a
/// "forever" setting does not stop the process, and a cancelled single-flight follower stops
/// waiting at once.
@Suite("Fleet fail-open edges", .timingSensitive, .timeLimit(.minutes(1)))
struct FleetFailOpenEdgeTests {
    /// An entry to write, `full` fetched now (a write that waited too long is dropped).
    static var entry: CacheEntry {
        var entry = FleetEntryCodingTests.full
        entry.discardAfter = nil
        entry.requestTime = Date()
        entry.storedAt = Date()
        return entry
    }

    /// A lookup whose soft timeout is spent before it reaches the store, right when the breaker
    /// would let its probe through, leaves the probe to the next lookup, which finds the store
    /// back (the probe was taken and never reported: the breaker stayed open for good).
    @Test func aLookupThatCannotAskTheStoreLeavesTheProbeToTheNextOne() async throws {
        let store = InMemoryFleetStore()
        let tracer = StallingTracer()
        var configuration = FleetCacheStorage.Configuration()
        configuration.softTimeout = .milliseconds(50)
        configuration.failureThreshold = 1
        configuration.breakDuration = .milliseconds(100)
        configuration.singleFlight = nil
        configuration.tracer = tracer
        let storage = try FleetCacheStorage(local: MemoryCacheStorage(), store: store, configuration: configuration)
        let entry = Self.entry
        // A read that is not answered within the soft timeout opens the breaker.
        await store.setOutage(.hanging(.seconds(2)))
        #expect(await storage.entry(for: entry.key) == nil)
        #expect(storage.statistics.breakerOpenings == 1)
        await store.setOutage(.none)
        try await store.write(FleetEntryCoding.encode(entry))
        try await Task.sleep(for: .milliseconds(150))
        // The break is over; this lookup spends its whole soft timeout before the read.
        tracer.stall(.milliseconds(80))
        #expect(await storage.entry(for: entry.key) == nil)
        tracer.stall(nil)
        #expect(await storage.entry(for: entry.key) == entry)
        #expect(storage.statistics.secondTierHits == 1)
    }

    /// `.seconds(Int64.max)` for the soft timeout, the write timeout and the single-flight wait
    /// means "no limit": the tier works (it stopped the process on the first sleep).
    @Test func foreverSettingsMeanNoLimit() async throws {
        let server = try await startOrigin()
        defer { Task { await server.shutdown() } }
        let store = InMemoryFleetStore()
        var configuration = FleetCacheStorage.Configuration()
        configuration.softTimeout = .seconds(Int64.max)
        configuration.writeTimeout = .seconds(Int64.max)
        var flight = FleetCacheStorage.SingleFlight()
        flight.wait = .seconds(Int64.max)
        configuration.singleFlight = flight
        let a = try FleetInstance(baseURL: server.baseURL, store: store, configuration: configuration)
        let b = try FleetInstance(baseURL: server.baseURL, store: store, configuration: configuration)
        #expect(try await a.client.send(FleetText(path: "item/1")) == "item 1")
        await a.cache.waitForPendingWrites()
        #expect(await a.storage.flush())
        #expect(try await b.client.send(FleetText(path: "item/1")) == "item 1")
        #expect(server.requestCount == 1)
    }

    /// Instance A fetches under the fleet lock; B's caller waits for A's answer. Cancelled, it
    /// stops waiting at once and fails, without sending (it waited for the whole wait).
    @Test func aCancelledFollowerStopsWaiting() async throws {
        let gate = Gate()
        let server = try await startOrigin(gate: gate)
        defer { Task { await server.shutdown() } }
        let store = InMemoryFleetStore()
        let a = try FleetInstance(baseURL: server.baseURL, store: store)
        let b = try FleetInstance(baseURL: server.baseURL, store: store)
        let leader = Task { try await a.client.send(FleetText(path: "item/3")) }
        #expect(await eventually { await store.lockedKeys.count == 1 })
        let follower = Task { try await b.client.send(FleetText(path: "item/3")) }
        #expect(await eventually { b.storage.waitingCallers == 1 })
        let cancelledAt = ContinuousClock.now
        follower.cancel()
        let outcome = await follower.result
        #expect(ContinuousClock.now - cancelledAt < .seconds(5))
        #expect(throws: (any Error).self) { try outcome.get() }
        #expect(b.storage.waitingCallers == 0)
        gate.release()
        #expect(try await leader.value == "item 3")
        #expect(server.requestCount == 1)
    }
}

/// A tracer that records like `InMemoryTracer` and, while told to, blocks the thread starting a
/// span (a slow tracer, or a thread descheduled on a loaded host). `Sendable` through the mutex
/// guarding the pause.
final class StallingTracer: Tracer {
    private let inner = InMemoryTracer()
    private let pause = Mutex<Duration?>(nil)

    func stall(_ duration: Duration?) { pause.withLock { $0 = duration } }

    func startSpan<Instant: TracerInstant>(
        _ operationName: String, context: @autoclosure () -> ServiceContext, ofKind kind: SpanKind, at instant: @autoclosure () -> Instant,
        function: String, file fileID: String, line: UInt
    ) -> InMemorySpan {
        if let duration = pause.withLock({ $0 }) { usleep(UInt32(duration.components.attoseconds / 1_000_000_000_000 + duration.components.seconds * 1_000_000)) }
        return inner.startSpan(operationName, context: context(), ofKind: kind, at: instant(), function: function, file: fileID, line: line)
    }

    func activeSpan(identifiedBy context: ServiceContext) -> InMemorySpan? { inner.activeSpan(identifiedBy: context) }

    func forceFlush() {}

    func inject<Carrier, Inject: Injector>(_ context: ServiceContext, into carrier: inout Carrier, using injector: Inject) where Carrier == Inject.Carrier {
        inner.inject(context, into: &carrier, using: injector)
    }

    func extract<Carrier, Extract: Extractor>(_ carrier: Carrier, into context: inout ServiceContext, using extractor: Extract) where Carrier == Extract.Carrier {
        inner.extract(carrier, into: &context, using: extractor)
    }
}
