@testable import Curlew
@testable import CurlewCore
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// A storage whose writes wait until the test opens the gate: a disk that takes its time.
actor GatedStorage: CacheStorage {
    let inner = MemoryCacheStorage()
    private var isOpen = false
    private var waiting: [CheckedContinuation<Void, Never>] = []
    /// Writes that have started (some may still wait at the gate).
    private(set) var writesStarted = 0

    func open() {
        isOpen = true
        waiting.forEach { $0.resume() }
        waiting = []
    }

    func entry(for key: String) async -> CacheEntry? { await inner.entry(for: key) }

    func store(_ entry: CacheEntry) async throws {
        writesStarted += 1
        if !isOpen { await withCheckedContinuation { waiting.append($0) } }
        await inner.store(entry)
    }

    func removeEntry(for key: String) async { await inner.removeEntry(for: key) }

    func removeEntries(where predicate: @Sendable (String) -> Bool) async -> Int { await inner.removeEntries(where: predicate) }

    func removeExpired(before date: Date) async -> Int { await inner.removeExpired(before: date) }
}

/// Storing is off the caller's path: the call returns before the write finishes, lookups through
/// the same cache see the answer at once, and `waitForPendingWrites()` waits for the storage.
@Suite("Cache writes off the request path", .timeLimit(.minutes(2)))
struct CachePendingWritesTests {
    @Test func theCallReturnsBeforeTheWriteAndItsOwnLookupsSeeTheAnswer() async throws {
        let storage = GatedStorage()
        let cache = ResponseCache(storage: storage, credentials: .anonymous)
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, handler: { _ in .text("answer \(counter.next())") }) { server, client in
            // The gate is closed: if the call waited for the write it would never return.
            #expect(try await client.send(CachedText(path: "a", policy: .writeOnly)) == "answer 1")
            #expect(await storage.inner.count == 0, "not written yet")
            let stored = try await client.response(for: CachedText(path: "a", policy: .cacheOnly()))
            #expect(stored.value == "answer 1")
            #expect(stored.source == .cache)
            #expect(try await client.send(CachedText(path: "a", policy: .maxAge(.hours(1)))) == "answer 1")
            #expect(server.requestCount == 1)
            #expect(await cache.statistics.stores == 1)

            let flushed = FlagBox()
            let waiter = Task {
                await cache.waitForPendingWrites()
                flushed.set()
            }
            #expect(await eventually { await storage.writesStarted == 1 })
            try await Task.sleep(for: .milliseconds(100))
            #expect(!flushed.isSet, "waitForPendingWrites waits for the storage")
            await storage.open()
            await waiter.value
            #expect(flushed.isSet)
            #expect(await storage.inner.count == 1)
            #expect(await storage.inner.entry(for: stored.source.detail ?? "")?.body == Data("answer 1".utf8))
        }
    }

    @Test func aNewerAnswerForTheSameKeyWinsAndTheOlderPendingWriteIsSkipped() async throws {
        let storage = GatedStorage()
        let cache = ResponseCache(storage: storage, credentials: .anonymous)
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, handler: { _ in .text("answer \(counter.next())") }) { _, client in
            for _ in 0..<3 { _ = try await client.send(CachedText(path: "a", policy: .writeOnly)) }
            #expect(try await client.send(CachedText(path: "a", policy: .cacheOnly())) == "answer 3")
            await storage.open()
            await cache.waitForPendingWrites()
            #expect(await storage.inner.count == 1)
            #expect(await storage.writesStarted <= 2, "the first write may have started; the second was superseded before it did")
            #expect(try await client.send(CachedText(path: "a", policy: .cacheOnly())) == "answer 3", "the last answer is what landed")
        }
    }

    @Test func invalidationWaitsForPendingWritesThenRemovesThem() async throws {
        let storage = GatedStorage()
        let cache = ResponseCache(storage: storage, credentials: .anonymous)
        try await withCachedLoopback(cache: cache, handler: { _ in .text("page") }) { _, client in
            _ = try await client.send(CachedText(path: "a", policy: .writeOnly))
            let removal = Task { await cache.invalidate(.all) }
            #expect(await eventually { await storage.writesStarted == 1 })
            await storage.open()
            #expect(await removal.value == 1)
            #expect(await storage.inner.count == 0)
            let error = await #expect(throws: CurlewError.self) { try await client.send(CachedText(path: "a", policy: .cacheOnly())) }
            #expect(error?.code == .cacheMiss)
        }
    }

    @Test func aDiskEntryIsOnDiskAfterWaitingAndReadByANewStore() async throws {
        let directory = makeCacheDirectory("pending")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = ResponseCache(storage: DiskCacheStorage(directory: directory), credentials: .anonymous)
        try await withCachedLoopback(cache: cache, handler: { _ in .text("page") }) { _, client in
            // A fixed key: the second loopback server listens on another port.
            _ = try await client.send(CachedText(path: "a", policy: .writeOnly)) { $0.cacheKey = "page a" }
            await cache.waitForPendingWrites()
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(names.count == 1)
        #expect(names.first?.hasSuffix(".entry") == true)
        let reopened = ResponseCache(storage: DiskCacheStorage(directory: directory), credentials: .anonymous)
        try await withCachedLoopback(cache: reopened, handler: { _ in .text("other") }) { server, client in
            let page = try await client.send(CachedText(path: "a", policy: .cacheOnly())) { $0.cacheKey = "page a" }
            #expect(page == "page")
            #expect(server.requestCount == 0)
        }
    }
}
