import Curlew
import Foundation
import LoopbackServer
import Testing
import TestSupport

/// A negative or NaN cache lifetime is refused with a typed error, not taken as zero: a computed
/// lifetime that went negative (`expiry - now`) silently made every stored answer stale, and a
/// negative retention discarded every entry as it was written.
@Suite("Cache lifetimes out of range", .timeLimit(.minutes(1)))
struct CacheLifetimeRefusalTests {
    static let refused: [(CachePolicy, String)] = [
        (.maxAge(.seconds(-5)), "maxAge's lifetime must be zero or more, not -5.0s"),
        (.maxAge(.minutes(-1), overridingServer: true), "maxAge's lifetime must be zero or more, not -60.0s"),
        (.networkFirst(staleFor: .hours(-1)), "networkFirst(staleFor:)'s lifetime must be zero or more, not -3600.0s"),
        (.cacheOnly(maxAge: .seconds(.nan)), "cacheOnly(maxAge:)'s lifetime must be zero or more, not nans"),
    ]

    @Test(arguments: 0..<refused.count)
    func aPolicyWithANegativeOrNaNLifetimeFailsUnsent(case index: Int) async throws {
        let (policy, message) = Self.refused[index]
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
        try await withCachedLoopback(cache: cache, handler: { _ in .text("page") }) { server, client in
            let error = await #expect(throws: CurlewError.self) { try await client.send(CachedText(path: "feed", policy: policy)) }
            #expect(error?.code == .invalidConnectionSettings)
            #expect(error?.stage == .configuration)
            #expect(error?.message == "the cache policy \(message); nothing was sent")
            #expect(error?.request?.description == "GET \(server.baseURL)/feed")
            #expect(server.requestCount == 0)
        }
    }

    @Test func zeroAndInfiniteLifetimesAreAccepted() async throws {
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
        try await withCachedLoopback(cache: cache, handler: { _ in .text("page") }) { server, client in
            let answer = try await client.send(CachedText(path: "feed", policy: .maxAge(.seconds(.infinity))))
            #expect(answer == "page")
            let stored = try await client.response(for: CachedText(path: "feed", policy: .maxAge(.seconds(.infinity))))
            #expect(stored.source == .cache)
            // A zero lifetime is never fresh: the second call goes to the server.
            _ = try await client.send(CachedText(path: "zero", policy: .maxAge(.seconds(0))))
            _ = try await client.send(CachedText(path: "zero", policy: .maxAge(.seconds(0))))
            #expect(server.requestCount == 3)
        }
    }

    @Test func aNegativeRetentionFailsTheCallsThatUseTheCache() async throws {
        let cache = ResponseCache(
            configuration: ResponseCache.Configuration(storage: MemoryCacheStorage(), credentials: .anonymous, retention: .days(-1)))
        try await withCachedLoopback(cache: cache, handler: { _ in .text("page") }) { server, client in
            let error = await #expect(throws: CurlewError.self) { try await client.send(CachedText(path: "feed", policy: .maxAge(.hours(1)))) }
            #expect(error?.code == .invalidConnectionSettings)
            #expect(error?.message == "ResponseCache.Configuration.retention must be zero or more, not -86400.0s; nothing was sent")
            #expect(server.requestCount == 0)
            // A call that leaves the cache out is not affected.
            let page = try await client.send(CachedText(path: "feed", policy: .networkOnly))
            #expect(page == "page")
            #expect(server.requestCount == 1)
        }
    }
}
