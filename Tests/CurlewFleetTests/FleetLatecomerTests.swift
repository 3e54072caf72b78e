import Curlew
@testable import CurlewFleet
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// A first tier whose chosen lookup gives its answer late: the lookup is made when asked, and
/// its answer returned only once the test releases it — a caller resumed late on a loaded machine.
final class LateLookupStorage: CacheStorage {
    let inner = MemoryCacheStorage()
    /// Lookups since ``hold(lookup:)``, the one to hold, whether it is held now and whether it
    /// was released; guarded by the mutex.
    private let state = Mutex<(lookups: Int, holdAt: Int?, holding: Bool, released: Bool)>((0, nil, false, false))

    /// Holds the `lookup`-th lookup from now.
    func hold(lookup: Int) { state.withLock { $0 = (0, lookup, false, false) } }
    var isHolding: Bool { state.withLock { $0.holding } }
    func release() { state.withLock { $0.released = true } }

    func entry(for key: String) async -> CacheEntry? {
        let answer = await inner.entry(for: key)
        let held = state.withLock { state -> Bool in
            state.lookups += 1
            guard state.lookups == state.holdAt else { return false }
            state.holding = true
            return true
        }
        if held {
            while !state.withLock({ $0.released }) { try? await Task.sleep(for: .milliseconds(2)) }
            state.withLock { $0.holding = false }
        }
        return answer
    }

    func store(_ entry: CacheEntry) async throws { await inner.store(entry) }
    func removeEntry(for key: String) async { await inner.removeEntry(for: key) }
    func removeEntries(where predicate: @Sendable (String) -> Bool) async -> Int { await inner.removeEntries(where: predicate) }
    func removeExpired(before date: Date) async -> Int { await inner.removeExpired(before: date) }
}

/// A caller that misses just before a fetch of the same key ends must not fetch again: it finds
/// the answer in its own first tier (a fetch of its instance) or in the store (another
/// instance's), however late it is resumed between its lookups and its lock.
@Suite("Fleet single-flight latecomers", .timingSensitive)
struct FleetLatecomerTests {
    struct Instance {
        let local = LateLookupStorage()
        let storage: FleetCacheStorage
        let client: APIClient

        init(baseURL: String, store: any FleetStore) throws {
            storage = try FleetCacheStorage(local: local, store: store, configuration: .generousForTests)
            let cache = ResponseCache(storage: storage, credentials: .anonymous)
            client = APIClient(configuration: ClientConfiguration(baseURL: baseURL, middleware: [cache]))
        }
    }

    /// Another instance's fetch ends while this caller is between its store read (absent) and
    /// the lock (now free): the one more read after the lock finds the answer.
    @Test func aCallerOfAnotherInstanceThatMissedAsTheFetchEndedIsServedFromTheStore() async throws {
        let gate = Gate()
        let server = try await startOrigin(gate: gate)
        let store = InMemoryFleetStore()
        let fetching = try Instance(baseURL: server.baseURL, store: store)
        let late = try Instance(baseURL: server.baseURL, store: store)
        let first = Task { try await fetching.client.send(FleetText(path: "item/5")) }
        #expect(await eventually { server.requestCount == 1 })
        // The late caller misses both tiers and is held at its second first-tier lookup, past its
        // store read and before its lock.
        late.local.hold(lookup: 2)
        let second = Task { try await late.client.send(FleetText(path: "item/5")) }
        #expect(await eventually { late.local.isHolding })
        gate.release()
        #expect(try await first.value == "item 5")
        // The answer is in the store and the fetching instance's lock is given back.
        #expect(await fetching.storage.flush())
        #expect(await eventually { await store.lockedKeys.isEmpty })
        late.local.release()
        #expect(try await second.value == "item 5")
        #expect(server.requestCount == 1)
        #expect(fetching.storage.statistics.singleFlightLeads + late.storage.statistics.singleFlightLeads == 1)
        #expect(await eventually { await store.lockedKeys.isEmpty }, "no lock left behind")
        await server.shutdown()
    }

    /// A fetch of the same instance ends while this caller is between its first-tier lookup and
    /// its flight: its instance's lock is its own (taken again at once), so it must find the
    /// answer in the first tier, or wait in the fetch's flight.
    @Test func aCallerOfTheSameInstanceThatMissedAsTheFetchEndedIsNotASecondFetch() async throws {
        let gate = Gate()
        let server = try await startOrigin(gate: gate)
        let store = InMemoryFleetStore()
        let instance = try Instance(baseURL: server.baseURL, store: store)
        let first = Task { try await instance.client.send(FleetText(path: "item/6")) }
        #expect(await eventually { server.requestCount == 1 })
        instance.local.hold(lookup: 2)
        let second = Task { try await instance.client.send(FleetText(path: "item/6")) }
        // Held before its flight, or already waiting in the fetch's flight.
        #expect(await eventually { instance.local.isHolding || instance.storage.waitingCallers == 1 })
        gate.release()
        #expect(try await first.value == "item 6")
        #expect(await instance.storage.flush())
        #expect(await eventually { await store.lockedKeys.isEmpty })
        instance.local.release()
        #expect(try await second.value == "item 6")
        #expect(server.requestCount == 1)
        #expect(instance.storage.statistics.singleFlightLeads == 1)
        await server.shutdown()
    }
}
