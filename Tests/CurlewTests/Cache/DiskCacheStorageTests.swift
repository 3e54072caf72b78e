@testable import Curlew
@testable import CurlewCore
import Foundation
import Testing

/// ``DiskCacheStorage`` and ``MemoryCacheStorage`` on their own: round trips, every kind of
/// damage, collisions, hostile keys, bounds, sweeps and a deleted directory.
@Suite("Cache storage: memory and disk", .timeLimit(.minutes(2)))
struct DiskCacheStorageTests {
    static func entry(_ key: String, body: String = "body", discardAfter: Date? = nil) -> CacheEntry {
        CacheEntry(
            key: key, status: 200, headers: [.contentType: "text/plain", .eTag: "\"1\""],
            body: Data(body.utf8), url: "http://127.0.0.1/x", requestTime: Date(timeIntervalSince1970: 1_000),
            storedAt: Date(timeIntervalSince1970: 1_001), varyNames: ["accept-language"], varyTag: "tag", discardAfter: discardAfter)
    }

    private func entryFiles(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasSuffix(".entry") }
    }

    @Test func anEntryRoundTripsThroughANewStore() async throws {
        let directory = makeCacheDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let written = Self.entry("GET http://a/1", body: String(repeating: "x", count: 100_000))
        try await DiskCacheStorage(directory: directory).store(written)
        let read = await DiskCacheStorage(directory: directory).entry(for: "GET http://a/1")
        #expect(read == written)
        #expect(await DiskCacheStorage(directory: directory).entry(for: "GET http://a/2") == nil)
    }

    @Test(arguments: ["truncated", "bit flipped", "garbage", "empty", "header damaged", "lengths lie"])
    func damageOfEachKindIsAMissAndTheFileIsDeleted(_ damage: String) async throws {
        let directory = makeCacheDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await DiskCacheStorage(directory: directory).store(Self.entry("k", body: String(repeating: "y", count: 5_000)))
        let path = directory + "/" + DiskEntryFormat.fileName(for: "k")
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        switch damage {
        case "truncated": bytes = bytes.prefix(bytes.count - 100)
        case "bit flipped": bytes[bytes.count - 2_000] ^= 0x04
        case "garbage": bytes = Data((0..<bytes.count).map { UInt8(truncatingIfNeeded: $0 &* 31) })
        case "empty": bytes = Data()
        case "header damaged": bytes[DiskEntryFormat.prefixLength + 3] ^= 0xFF
        default: bytes[9] ^= 0x01
        }
        try bytes.write(to: URL(fileURLWithPath: path))
        // Read in a store that opened before the damage (checksum on read)…
        let store = DiskCacheStorage(directory: directory)
        #expect(await store.entry(for: "k") == nil)
        #expect(!FileManager.default.fileExists(atPath: path))
        // …and in one opening after it (structure check on open).
        try bytes.write(to: URL(fileURLWithPath: path))
        let reopened = DiskCacheStorage(directory: directory)
        #expect(await reopened.entry(for: "k") == nil)
        #expect(!FileManager.default.fileExists(atPath: path))
    }

    @Test func aCollisionIsAMissBecauseTheStoredKeyIsCompared() async throws {
        let directory = makeCacheDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await DiskCacheStorage(directory: directory).store(Self.entry("key A", body: "A"))
        // Put A's file where B's would be: same slot, different key.
        try FileManager.default.moveItem(
            atPath: directory + "/" + DiskEntryFormat.fileName(for: "key A"), toPath: directory + "/" + DiskEntryFormat.fileName(for: "key B"))
        #expect(await DiskCacheStorage(directory: directory).entry(for: "key B") == nil)
    }

    @Test func strayTemporaryFilesAreSweptOnOpen() async throws {
        let directory = makeCacheDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await DiskCacheStorage(directory: directory).store(Self.entry("k"))
        let stray = directory + "/.tmp-" + UUID().uuidString
        #expect(FileManager.default.createFile(atPath: stray, contents: Data("half an entry".utf8)))
        let store = DiskCacheStorage(directory: directory)
        #expect(await store.count == 1)
        #expect(!FileManager.default.fileExists(atPath: stray))
    }

    @Test func hostileKeysStayInsideTheDirectory() async throws {
        let parent = makeCacheDirectory("parent")
        let directory = parent + "/cache"
        defer { try? FileManager.default.removeItem(atPath: parent) }
        let store = DiskCacheStorage(directory: directory)
        let keys = ["../../escape", "../" + String(repeating: "a/", count: 5_000), String(repeating: "k", count: 10_240), "/etc/passwd", "a\u{0}b"]
        for key in keys { try await store.store(Self.entry(key, body: key)) }
        for key in keys { #expect(await store.entry(for: key)?.body == Data(key.utf8)) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: parent) == ["cache"])
        let names = entryFiles(directory)
        #expect(names.count == keys.count)
        #expect(names.allSatisfy { $0.count == 64 + 6 && !$0.contains("/") })
    }

    @Test func theSizeBoundEvictsTheLeastRecentlyUsed() async throws {
        let directory = makeCacheDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let body = String(repeating: "z", count: 10_000)
        let store = DiskCacheStorage(directory: directory, maximumBytes: 35_000)
        for key in ["a", "b", "c"] { try await store.store(Self.entry(key, body: body)) }
        _ = await store.entry(for: "a")  // a is now more recent than b
        try await store.store(Self.entry("d", body: body))
        #expect(await store.entry(for: "b") == nil)
        #expect(await store.entry(for: "a") != nil)
        #expect(await store.entry(for: "c") != nil)
        #expect(await store.entry(for: "d") != nil)
        #expect(entryFiles(directory).count == 3)
        #expect(await store.totalBytes <= 35_000)
    }

    @Test func expiredEntriesAreSweptByCallAndOnOpen() async throws {
        let directory = makeCacheDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = DiskCacheStorage(directory: directory)
        try await store.store(Self.entry("old", discardAfter: Date(timeIntervalSinceNow: -10)))
        try await store.store(Self.entry("new", discardAfter: Date(timeIntervalSinceNow: 3_600)))
        try await store.store(Self.entry("later", discardAfter: Date(timeIntervalSinceNow: 60)))
        #expect(await store.removeExpired(before: Date()) == 1)
        #expect(entryFiles(directory).count == 2)
        let reopened = DiskCacheStorage(directory: directory, now: { Date(timeIntervalSinceNow: 120) })
        #expect(await reopened.count == 1)
        #expect(await reopened.entry(for: "new") != nil)
    }

    @Test func aDeletedDirectoryIsRecreatedByTheNextWrite() async throws {
        let directory = makeCacheDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = DiskCacheStorage(directory: directory)
        try await store.store(Self.entry("a"))
        try FileManager.default.removeItem(atPath: directory)
        #expect(await store.entry(for: "a") == nil)
        try await store.store(Self.entry("b"))
        #expect(await store.entry(for: "b") != nil)
        #expect(await store.count == 1)
    }

    @Test func memoryStorageIsBoundedByBytesAndLeastRecentlyUsed() async throws {
        let entrySize = Self.entry("a", body: String(repeating: "m", count: 1_000)).size
        let store = MemoryCacheStorage(maximumBytes: entrySize * 2)
        await store.store(Self.entry("a", body: String(repeating: "m", count: 1_000)))
        await store.store(Self.entry("b", body: String(repeating: "m", count: 1_000)))
        _ = await store.entry(for: "a")
        await store.store(Self.entry("c", body: String(repeating: "m", count: 1_000)))
        #expect(await store.entry(for: "b") == nil)
        #expect(await store.entry(for: "a") != nil)
        #expect(await store.entry(for: "c") != nil)
        #expect(await store.totalBytes == entrySize * 2)
        await store.store(Self.entry("huge", body: String(repeating: "m", count: 10_000)))
        #expect(await store.entry(for: "huge") == nil)
        #expect(await store.removeEntries { $0 == "a" } == 1)
        #expect(await store.count == 1)
    }

    /// Storing an answer again, or reading it, makes it the most recently used, in memory and
    /// on disk; eviction then takes the next oldest, one entry per entry too many.
    @Test func aReplacedOrReadEntryIsTheLastToBeEvicted() async throws {
        let body = String(repeating: "r", count: 1_000)
        let entrySize = Self.entry("a", body: body).size
        let memory = MemoryCacheStorage(maximumBytes: entrySize * 3)
        let directory = makeCacheDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fileSize = try DiskEntryFormat.encode(Self.entry("a", body: body)).count
        let disk = DiskCacheStorage(directory: directory, maximumBytes: fileSize * 3)
        for key in ["a", "b", "c"] {
            await memory.store(Self.entry(key, body: body))
            try await disk.store(Self.entry(key, body: body))
        }
        await memory.store(Self.entry("a", body: body))
        try await disk.store(Self.entry("a", body: body))
        _ = await memory.entry(for: "b")
        _ = await disk.entry(for: "b")
        await memory.store(Self.entry("d", body: body))
        try await disk.store(Self.entry("d", body: body))
        #expect(await memory.keys == ["a", "b", "d"])
        #expect(await disk.entry(for: "c") == nil)
        for key in ["a", "b", "d"] { #expect(await disk.entry(for: key) != nil) }
        #expect(await memory.count == 3)
        #expect(await disk.count == 3)
    }
}
