@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

/// A download of a request whose options ask for the cache honours the policy: a stored answer is
/// written to the destination without a request; a downloaded file is stored (up to
/// `maximumDownloadEntrySize`). A stream with a cache policy fails before anything is sent.
@Suite("Cache: downloads and streams", .serialized, .timeLimit(.minutes(2)))
struct CacheDownloadTests {
    /// A download whose endpoint options carry a cache policy.
    struct CachedFile: Endpoint {
        typealias Response = Data
        var path: String = "report.bin"
        var policy: CachePolicy

        var options: RequestOptions {
            var options = RequestOptions()
            options.cache = policy
            // One key whatever the loopback server's port, so a second server's client finds it.
            options.cacheKey = "report"
            return options
        }
    }

    /// Made for each use: LeakSanitizer reports a `Data` kept in a global until exit (see
    /// scripts/sanitizers/lsan-global-data-repro.sh).
    static var bytes: Data { Data((0..<3000).map { UInt8(truncatingIfNeeded: $0 &* 7) }) }

    /// A server that counts requests and answers the fixed bytes (with an `ETag`; `304` to a
    /// matching `If-None-Match`).
    static func handler(_ counter: HitCounter) -> @Sendable (ServerRequest) async -> ServerResponse {
        { request in
            _ = counter.next()
            if received(request, "If-None-Match") == "\"v1\"" { return ServerResponse(status: 304, headers: [("ETag", "\"v1\"")]) }
            return ServerResponse(headers: [("Content-Type", "application/octet-stream"), ("ETag", "\"v1\"")], body: [UInt8](bytes))
        }
    }

    @Test func aSecondDownloadUnderMaxAgeIsWrittenFromTheMemoryStoreWithoutARequest() async throws {
        let folder = try temporaryDirectory("cache-dl-memory")
        defer { try? FileManager.default.removeItem(at: folder) }
        let counter = HitCounter()
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
        try await withCachedLoopback(cache: cache, handler: Self.handler(counter)) { server, client in
            let log = EventLog(client)
            let first = try await client.download(CachedFile(policy: .maxAge(.hours(1))), to: folder.appendingPathComponent("a.bin"))
            #expect(first.length == 3000)
            #expect(try Data(contentsOf: first.url) == Self.bytes)
            let second = try await client.download(CachedFile(policy: .maxAge(.hours(1))), to: folder.appendingPathComponent("b.bin"))
            #expect(second.length == 3000)
            #expect(second.status == .ok)
            #expect(second.mimeType == "application/octet-stream")
            #expect(try Data(contentsOf: second.url) == Self.bytes)
            var info = stat()
            #expect(stat(second.url.path, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o600)
            #expect(server.requestCount == 1, "the second download never reached the server")
            #expect(contents(of: folder) == ["a.bin", "b.bin"], "no partial file is left")
            let statistics = await cache.statistics
            #expect(statistics.hits == 1)
            #expect(statistics.misses == 1)
            #expect(statistics.stores == 1)
            #expect(await eventually { log.kinds(cacheEventKinds) == [.cacheMiss, .cacheStored, .cacheHit] })
            log.stop()
        }
    }

    @Test func aDownloadStoredOnDiskIsServedCacheOnlyByAnotherCacheOverTheSameDirectory() async throws {
        let folder = try temporaryDirectory("cache-dl-disk")
        let directory = makeCacheDirectory("dl-disk")
        defer {
            try? FileManager.default.removeItem(at: folder)
            try? FileManager.default.removeItem(atPath: directory)
        }
        let counter = HitCounter()
        let writer = ResponseCache(storage: DiskCacheStorage(directory: directory), credentials: .anonymous)
        try await withCachedLoopback(cache: writer, handler: Self.handler(counter)) { server, client in
            _ = try await client.download(CachedFile(policy: .writeOnly), to: folder.appendingPathComponent("net.bin"))
            await writer.waitForPendingWrites()
            #expect(server.requestCount == 1)
        }
        // A new process's cache: the entry comes from the files, and no server is needed at all.
        let reader = ResponseCache(storage: DiskCacheStorage(directory: directory), credentials: .anonymous)
        try await withCachedLoopback(cache: reader, handler: Self.handler(counter)) { server, client in
            let file = try await client.download(CachedFile(policy: .cacheOnly()), to: folder.appendingPathComponent("offline.bin"))
            #expect(try Data(contentsOf: file.url) == Self.bytes)
            #expect(file.length == 3000)
            #expect(server.requestCount == 0)
        }
        #expect(counter.count == 1)
    }

    @Test func aCacheOnlyDownloadWithNothingStoredIsATypedMissAndLeavesNoFile() async throws {
        let folder = try temporaryDirectory("cache-dl-miss")
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
        try await withCachedLoopback(cache: cache, handler: Self.handler(HitCounter())) { server, client in
            let error = await #expect(throws: CurlewError.self) {
                try await client.download(CachedFile(policy: .cacheOnly()), to: folder.appendingPathComponent("x.bin"))
            }
            #expect(error?.code == .cacheMiss)
            #expect(server.requestCount == 0)
            #expect(contents(of: folder) == [])
        }
    }

    @Test func aStaleDownloadIsRevalidatedAndThe304WritesTheStoredBytes() async throws {
        let folder = try temporaryDirectory("cache-dl-304")
        defer { try? FileManager.default.removeItem(at: folder) }
        let counter = HitCounter()
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
        try await withCachedLoopback(cache: cache, handler: Self.handler(counter)) { server, client in
            _ = try await client.download(CachedFile(policy: .alwaysRevalidate), to: folder.appendingPathComponent("1.bin"))
            let file = try await client.download(CachedFile(policy: .alwaysRevalidate), to: folder.appendingPathComponent("2.bin"))
            #expect(try Data(contentsOf: file.url) == Self.bytes)
            #expect(file.length == 3000)
            #expect(server.requestCount == 2)
            let second = try #require(server.requests.last)
            #expect(received(second, "If-None-Match") == "\"v1\"")
            #expect(await cache.statistics.revalidations == 1)
            #expect(contents(of: folder) == ["1.bin", "2.bin"])
        }
    }

    @Test func aDownloadAboveTheEntryLimitSucceedsAndIsNotStored() async throws {
        let folder = try temporaryDirectory("cache-dl-limit")
        defer { try? FileManager.default.removeItem(at: folder) }
        var configuration = ResponseCache.Configuration(storage: MemoryCacheStorage(), credentials: .anonymous)
        configuration.maximumDownloadEntrySize = 2999
        let cache = ResponseCache(configuration: configuration)
        try await withCachedLoopback(cache: cache, handler: Self.handler(HitCounter())) { server, client in
            for name in ["1.bin", "2.bin"] {
                let file = try await client.download(CachedFile(policy: .maxAge(.hours(1))), to: folder.appendingPathComponent(name))
                #expect(try Data(contentsOf: file.url) == Self.bytes)
            }
            #expect(server.requestCount == 2, "3000 bytes are above the 2999-byte limit: nothing was stored")
            #expect(await cache.statistics.stores == 0)
        }
    }

    @Test func aStoredJSONAnswerIsRefusedByADownloadLikeTheNetworkAnswerWouldBe() async throws {
        let folder = try temporaryDirectory("cache-dl-json")
        defer { try? FileManager.default.removeItem(at: folder) }
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
        try await withCachedLoopback(cache: cache, handler: { _ in .json(#"{"a":1}"#) }) { server, client in
            _ = try await client.response(for: CachedFile(policy: .maxAge(.hours(1))))
            let error = await #expect(throws: CurlewError.self) {
                try await client.download(CachedFile(policy: .maxAge(.hours(1))), to: folder.appendingPathComponent("j.bin"))
            }
            #expect(error?.code == .unexpectedContentType)
            #expect(error?.responseBody == Data(#"{"a":1}"#.utf8))
            #expect(server.requestCount == 1, "the JSON came from the cache")
            #expect(contents(of: folder) == [])
        }
    }

    @Test(arguments: [CachePolicy.maxAge(.hours(1)), .cacheOnly(), .writeOnly, .http, .alwaysRevalidate, .networkFirst(staleFor: .hours(1))])
    func aStreamWithACachePolicyFailsBeforeAnythingIsSent(_ policy: CachePolicy) async throws {
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
        try await withCachedLoopback(cache: cache, handler: Self.handler(HitCounter())) { server, client in
            let error = await #expect(throws: CurlewError.self) { try await client.stream(CachedFile(policy: policy)) }
            #expect(error?.code == .cachePolicyConflict)
            #expect(error?.stage == .configuration)
            #expect(error?.level == .invalidRequest)
            #expect(error?.message.contains("streamed") == true)
            #expect(server.requestCount == 0)
            let statistics = await cache.statistics
            #expect(statistics == CacheStatistics())
        }
    }

    @Test func aStreamWithNetworkOnlyForTheCallStreams() async throws {
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
        try await withCachedLoopback(cache: cache, handler: Self.handler(HitCounter())) { server, client in
            let response = try await client.stream(CachedFile(policy: .maxAge(.hours(1)))) { $0.cache = .networkOnly }
            var received = Data()
            for try await chunk in response.value { received.append(contentsOf: chunk) }
            #expect(received == Self.bytes)
            #expect(server.requestCount == 1)
        }
    }
}
