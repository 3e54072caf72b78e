@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import LoopbackServer
import Testing

/// RFC 9111 freshness beyond `max-age`: heuristic lifetimes from `Last-Modified`, a private
/// cache ignoring `s-maxage`, `must-revalidate` offline, and the caller's own `no-cache` — each
/// against the counting loopback server with a movable clock.
@Suite("HTTP freshness: heuristics, s-maxage, must-revalidate", .timeLimit(.minutes(2)))
struct CacheHTTPFreshnessTests {
    private func makeCache(clock: CacheTestClock, shared: Bool = false) -> ResponseCache {
        ResponseCache(configuration: .init(storage: MemoryCacheStorage(), credentials: .anonymous, isShared: shared, now: clock.function))
    }

    /// Answers `answer <n>` with `status` and the headers, recording what each request carried.
    private func counting(
        _ counter: HitCounter, status: Int = 200, headers: [(name: String, value: String)]
    ) -> @Sendable (ServerRequest) async -> ServerResponse {
        { _ in ServerResponse(status: status, headers: headers + [("Content-Type", "text/plain")], body: Array("answer \(counter.next())".utf8)) }
    }

    /// `Date` now and `Last-Modified` ten hours earlier: a heuristic lifetime of one hour.
    private func tenHoursOld(_ base: Date) -> [(name: String, value: String)] {
        [("Date", httpDate(base)), ("Last-Modified", httpDate(base.addingTimeInterval(-36_000)))]
    }

    @Test func lastModifiedGivesAHeuristicLifetimeOfATenthOfItsAge() async throws {
        let base = Date()
        let clock = CacheTestClock(base)
        let cache = makeCache(clock: clock)
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, handler: counting(counter, headers: tenHoursOld(base))) { server, client in
            let first = try await client.response(for: CachedText(path: "h", policy: .http))
            #expect(first.source == .network)
            clock.advance(3_500)
            let second = try await client.response(for: CachedText(path: "h", policy: .http))
            #expect(second.source == .cache, "younger than 10 % of ten hours")
            #expect(server.requestCount == 1)
            clock.advance(200)
            let third = try await client.response(for: CachedText(path: "h", policy: .http))
            #expect(third.value == "answer 2")
            #expect(server.requestCount == 2)
            #expect(received(server.requests[1], "If-Modified-Since") == httpDate(base.addingTimeInterval(-36_000)))
        }
    }

    @Test func noHeuristicForAStatusThatIsNotHeuristicallyCacheableUnlessPublic() async throws {
        let base = Date()
        let clock = CacheTestClock(base)
        let counter = HitCounter()
        try await withCachedLoopback(cache: makeCache(clock: clock), handler: counting(counter, status: 202, headers: tenHoursOld(base))) { server, client in
            _ = try await client.send(CachedText(path: "accepted", policy: .http))
            clock.advance(60)
            let again = try await client.response(for: CachedText(path: "accepted", policy: .http))
            #expect(again.source == .network, "202 is not heuristically cacheable")
            #expect(server.requestCount == 2)
        }
        let publicCounter = HitCounter()
        let publicHeaders = tenHoursOld(base) + [("Cache-Control", "public")]
        try await withCachedLoopback(cache: makeCache(clock: clock), handler: counting(publicCounter, status: 202, headers: publicHeaders)) { server, client in
            _ = try await client.send(CachedText(path: "accepted", policy: .http))
            clock.advance(60)
            let again = try await client.response(for: CachedText(path: "accepted", policy: .http))
            #expect(again.source == .cache, "`public` makes any status heuristically cacheable")
            #expect(server.requestCount == 1)
        }
    }

    @Test func anExplicitLifetimeBeatsTheHeuristicAndNoLastModifiedMeansNone() async throws {
        let base = Date()
        let clock = CacheTestClock(base)
        let counter = HitCounter()
        let explicit = tenHoursOld(base) + [("Cache-Control", "max-age=60")]
        try await withCachedLoopback(cache: makeCache(clock: clock), handler: counting(counter, headers: explicit)) { server, client in
            _ = try await client.send(CachedText(path: "e", policy: .http))
            clock.advance(61)
            #expect(try await client.response(for: CachedText(path: "e", policy: .http)).source == .network)
            #expect(server.requestCount == 2)
        }
        let bare = HitCounter()
        try await withCachedLoopback(cache: makeCache(clock: clock), handler: counting(bare, headers: [("Date", httpDate(base))])) { server, client in
            _ = try await client.send(CachedText(path: "b", policy: .http))
            #expect(try await client.response(for: CachedText(path: "b", policy: .http)).source == .network, "nothing to be fresh by")
            #expect(server.requestCount == 2)
        }
    }

    @Test func aDateInTheFutureCannotLengthenTheHeuristicLifetime() async throws {
        let base = Date()
        let clock = CacheTestClock(base)
        let counter = HitCounter()
        // With `Date` a day ahead the heuristic would be 10 % of 34 hours; it stays 10 % of 10.
        let headers: [(name: String, value: String)] = [
            ("Date", httpDate(base.addingTimeInterval(86_400))), ("Last-Modified", httpDate(base.addingTimeInterval(-36_000))),
        ]
        try await withCachedLoopback(cache: makeCache(clock: clock), handler: counting(counter, headers: headers)) { server, client in
            _ = try await client.send(CachedText(path: "f", policy: .http))
            clock.advance(3_500)
            #expect(try await client.response(for: CachedText(path: "f", policy: .http)).source == .cache)
            clock.advance(200)
            #expect(try await client.response(for: CachedText(path: "f", policy: .http)).source == .network)
            #expect(server.requestCount == 2)
        }
    }

    @Test func theHeuristicNeverShortensTheAppsOwnLifetime() async throws {
        let base = Date()
        let clock = CacheTestClock(base)
        let counter = HitCounter()
        try await withCachedLoopback(cache: makeCache(clock: clock), handler: counting(counter, headers: tenHoursOld(base))) { server, client in
            _ = try await client.send(CachedText(path: "app", policy: .maxAge(.hours(8))))
            clock.advance(2 * 3_600)
            #expect(try await client.response(for: CachedText(path: "app", policy: .maxAge(.hours(8)))).source == .cache)
            #expect(server.requestCount == 1)
        }
    }

    @Test func aPrivateCacheIgnoresSMaxageAndASharedOneHonoursIt() async throws {
        let clock = CacheTestClock()
        let privateCounter = HitCounter()
        try await withCachedLoopback(cache: makeCache(clock: clock), handler: counting(privateCounter, headers: [("Cache-Control", "s-maxage=600")])) { server, client in
            _ = try await client.send(CachedText(path: "s", policy: .http))
            #expect(try await client.response(for: CachedText(path: "s", policy: .http)).source == .network)
            #expect(server.requestCount == 2)
        }
        let sharedCounter = HitCounter()
        try await withCachedLoopback(
            cache: makeCache(clock: clock, shared: true), handler: counting(sharedCounter, headers: [("Cache-Control", "s-maxage=600, max-age=0")])
        ) { server, client in
            _ = try await client.send(CachedText(path: "s", policy: .http))
            #expect(try await client.response(for: CachedText(path: "s", policy: .http)).source == .cache, "s-maxage wins over max-age when shared")
            #expect(server.requestCount == 1)
        }
    }

    @Test func aPrivateAnswerIsStoredAndServedByAPrivateCache() async throws {
        let clock = CacheTestClock()
        let counter = HitCounter()
        try await withCachedLoopback(cache: makeCache(clock: clock), handler: counting(counter, headers: [("Cache-Control", "private, max-age=600")])) { server, client in
            _ = try await client.send(CachedText(path: "p", policy: .http))
            #expect(try await client.response(for: CachedText(path: "p", policy: .http)).source == .cache)
            #expect(server.requestCount == 1)
        }
    }

    @Test func theCallersOwnNoCacheGoesToTheServer() async throws {
        let clock = CacheTestClock()
        let counter = HitCounter()
        try await withCachedLoopback(cache: makeCache(clock: clock), handler: counting(counter, headers: [("Cache-Control", "max-age=600")])) { server, client in
            _ = try await client.send(CachedText(path: "n", policy: .http))
            #expect(try await client.response(for: CachedText(path: "n", policy: .http)).source == .cache)
            let forced = try await client.response(for: CachedText(path: "n", headers: ["Cache-Control": "no-cache"], policy: .http))
            #expect(forced.source == .network)
            #expect(forced.value == "answer 2")
            #expect(server.requestCount == 2)
        }
    }

    /// Stores one answer with `cacheControl`, stops the server, and says whether the offline
    /// fallback served it `after` seconds.
    private func offlineFallback(cacheControl: String, after seconds: Double) async throws -> ResponseSource? {
        let clock = CacheTestClock()
        let cache = makeCache(clock: clock)
        let server = try await LoopbackServer.start { _ in ServerResponse(status: 200, headers: [("Cache-Control", cacheControl)], body: Array("stored".utf8)) }
        let transport = CurlTransport()
        let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [cache]), transport: transport)
        let request = CachedText(path: "o", policy: .networkFirst(staleFor: .hours(1)), key: "o")
        let offlineClient = APIClient(configuration: ClientConfiguration(baseURL: refusingBaseURL, middleware: [cache]), transport: transport)
        var source: ResponseSource?
        do {
            _ = try await client.send(request)
            await server.shutdown()
            clock.advance(seconds)
            source = try await offlineClient.response(for: request).source
        } catch let error as CurlewError where error.code == .cannotConnect {
            source = nil
        } catch {
            await transport.shutdown()
            throw error
        }
        await transport.shutdown()
        return source
    }

    @Test func mustRevalidateIsNeverServedStaleOfflineButNoCacheIs() async throws {
        #expect(try await offlineFallback(cacheControl: "max-age=10, must-revalidate", after: 5) == .cache, "still fresh")
        #expect(try await offlineFallback(cacheControl: "max-age=10, must-revalidate", after: 11) == nil, "stale and must-revalidate")
        #expect(try await offlineFallback(cacheControl: "no-cache", after: 60) == .cache, "the app's staleFor accepts no-cache answers offline")
        #expect(try await offlineFallback(cacheControl: "max-age=10", after: 60) == .cache)
        // The reasoning is in the Caching article ("Offline: no-cache and must-revalidate").
        #expect(try await offlineFallback(cacheControl: "private, no-cache", after: 60) == .cache, "the common API default")
        #expect(try await offlineFallback(cacheControl: "no-cache, must-revalidate", after: 1) == nil, "must-revalidate wins over the app's consent")
        #expect(try await offlineFallback(cacheControl: "no-cache", after: 3_601) == nil, "older than staleFor (1 hour)")
    }
}
