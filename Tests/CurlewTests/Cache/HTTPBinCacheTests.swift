@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import TestSupport
import Testing

/// HTTP caching against httpbin — a widely used test service nobody here wrote — started on
/// 127.0.0.1 by `scripts/test.sh` (`scripts/httpbin.sh`). These tests fail, not skip, without
/// `CURLEW_HTTPBIN_URL`, so a run that forgot httpbin cannot pass.
@Suite("HTTP caching against httpbin", .timeLimit(.minutes(2)))
struct HTTPBinCacheTests {
    private func makeClient(clock: CacheTestClock = CacheTestClock(), shared: Bool = false) throws -> (APIClient, ResponseCache, MemoryCacheStorage) {
        let storage = MemoryCacheStorage()
        let cache = ResponseCache(configuration: .init(storage: storage, credentials: .anonymous, isShared: shared, now: clock.function))
        let client = APIClient(configuration: ClientConfiguration(baseURL: try TestServers.httpbin(), middleware: [cache]))
        return (client, cache, storage)
    }

    @Test func etagIsRevalidatedWithIfNoneMatchAnd304() async throws {
        let (client, cache, _) = try makeClient()
        let first = try await client.response(for: CachedText(path: "etag/abc123", policy: .http))
        #expect(first.source == .network)
        #expect(first.headers[.eTag] == "abc123")
        // httpbin sends no freshness: the entry is stale at once and revalidated.
        let second = try await client.response(for: CachedText(path: "etag/abc123", policy: .http))
        #expect(second.source == .revalidated, "httpbin answered 304 because it saw If-None-Match")
        #expect(second.body == first.body)
        #expect(await cache.statistics.revalidations == 1)
        #expect(await cache.statistics.stores == 1)
    }

    @Test func lastModifiedIsRevalidatedWithIfModifiedSince() async throws {
        let (client, cache, _) = try makeClient()
        let first = try await client.response(for: CachedText(path: "cache", policy: .alwaysRevalidate))
        #expect(first.headers[.lastModified] != nil)
        let second = try await client.response(for: CachedText(path: "cache", policy: .alwaysRevalidate))
        #expect(second.source == .revalidated)
        #expect(second.body == first.body)
        #expect(await cache.statistics.revalidations == 1)
    }

    @Test func cacheMaxAgeIsServedWhileFreshThenFetchedAgain() async throws {
        let clock = CacheTestClock()
        let (client, cache, _) = try makeClient(clock: clock)
        let first = try await client.response(for: CachedText(path: "cache/30", policy: .http))
        #expect(first.source == .network)
        #expect(first.headers[.cacheControl] == "public, max-age=30")
        clock.advance(29)
        let second = try await client.response(for: CachedText(path: "cache/30", policy: .http))
        #expect(second.source == .cache)
        #expect(second.metrics == nil, "no transfer happened")
        clock.advance(2)
        let third = try await client.response(for: CachedText(path: "cache/30", policy: .http))
        #expect(third.source == .network)
        #expect(third.metrics != nil)
        #expect(
            await cache.statistics
                == {
                    var s = CacheStatistics(); s.hits = 1; s.misses = 2; s.stores = 2; return s
                }())
    }

    @Test func noStoreFromResponseHeadersIsNeverWritten() async throws {
        let (client, _, storage) = try makeClient()
        let request = CachedText(path: "response-headers", query: [.init(name: "Cache-Control", value: "no-store")], policy: .maxAge(.hours(8), overridingServer: true))
        _ = try await client.send(request)
        let second = try await client.response(for: request)
        #expect(second.source == .network)
        #expect(await storage.count == 0)
    }

    @Test func ageFromResponseHeadersShortensFreshness() async throws {
        let clock = CacheTestClock()
        let (client, _, _) = try makeClient(clock: clock)
        let request = CachedText(
            path: "response-headers", query: [.init(name: "Cache-Control", value: "max-age=10"), .init(name: "Age", value: "8")], policy: .http)
        _ = try await client.send(request)
        clock.advance(1)
        #expect(try await client.response(for: request).source == .cache)
        clock.advance(2)
        #expect(try await client.response(for: request).source == .network)
    }

    @Test func varyKeepsLanguagesApartAndVaryStarIsNeverServed() async throws {
        let (client, _, _) = try makeClient()
        let query: [URLQueryItem] = [.init(name: "Cache-Control", value: "max-age=600"), .init(name: "Vary", value: "Accept-Language")]
        let english = CachedText(path: "response-headers", query: query, headers: ["Accept-Language": "en"], policy: .http)
        let french = CachedText(path: "response-headers", query: query, headers: ["Accept-Language": "fr"], policy: .http)
        var sources: [ResponseSource] = []
        for request in [english, french, english, french] { sources.append(try await client.response(for: request).source) }
        #expect(sources == [.network, .network, .cache, .cache])

        let star = CachedText(
            path: "response-headers", query: [.init(name: "Cache-Control", value: "max-age=600"), .init(name: "Vary", value: "*")], policy: .http)
        _ = try await client.send(star)
        #expect(try await client.response(for: star).source == .network)
    }

    @Test func lastModifiedWithoutExpiryGetsAHeuristicLifetimeCappedAtADay() async throws {
        let clock = CacheTestClock()
        let (client, _, _) = try makeClient(clock: clock)
        let request = CachedText(
            path: "response-headers", query: [.init(name: "Last-Modified", value: httpDate(Date().addingTimeInterval(-30 * 86_400)))], policy: .http)
        #expect(try await client.response(for: request).source == .network)
        clock.advance(23 * 3_600)
        #expect(try await client.response(for: request).source == .cache, "10 % of 30 days, capped at one day")
        clock.advance(3_700)
        #expect(try await client.response(for: request).source == .network)
    }

    @Test func sMaxageIsIgnoredByAPrivateCacheAndNoCacheAlwaysRevalidates() async throws {
        let (client, cache, _) = try makeClient()
        let shared = CachedText(path: "response-headers", query: [.init(name: "Cache-Control", value: "s-maxage=600")], policy: .http)
        _ = try await client.send(shared)
        #expect(try await client.response(for: shared).source == .network)
        let noCache = CachedText(
            path: "response-headers", query: [.init(name: "Cache-Control", value: "no-cache, max-age=600")], policy: .http)
        _ = try await client.send(noCache)
        #expect(try await client.response(for: noCache).source == .network)
        #expect(await cache.statistics.hits == 0)
    }

    @Test func privateIsStoredByAPrivateCacheOnly() async throws {
        let query: [URLQueryItem] = [.init(name: "Cache-Control", value: "private, max-age=600")]
        let (privateClient, _, _) = try makeClient()
        _ = try await privateClient.send(CachedText(path: "response-headers", query: query, policy: .http))
        #expect(try await privateClient.response(for: CachedText(path: "response-headers", query: query, policy: .http)).source == .cache)
        let (sharedClient, _, sharedStorage) = try makeClient(shared: true)
        _ = try await sharedClient.send(CachedText(path: "response-headers", query: query, policy: .http))
        #expect(await sharedStorage.count == 0)
    }
}
