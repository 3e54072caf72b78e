@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

/// A GET that accepts every status, with its own headers and policy (`.http` unless told).
private struct AnyStatusCall: Endpoint {
    typealias Response = String
    var path: String
    var headers: [String: String] = [:]
    var policy: CachePolicy = .http

    var options: RequestOptions {
        var options = RequestOptions()
        options.cache = policy
        return options
    }

    func accepts(_ status: HTTPResponse.Status) -> Bool { true }
}

/// RFC 9111 rules of ``CachePolicy/http`` beyond freshness by the response's own lifetime: which
/// statuses are stored (§3), the request's own directives (§5.2.1), stale answers the server
/// allows (RFC 5861) and the `Age` of a hit (§5.1) — each against the counting loopback server
/// with a movable clock.
@Suite("HTTP caching: storability, request directives, stale answers, Age", .timeLimit(.minutes(2)))
struct CacheRFC9111GapTests {
    private func makeCache(clock: CacheTestClock, shared: Bool = false) -> ResponseCache {
        ResponseCache(configuration: .init(storage: MemoryCacheStorage(), credentials: .anonymous, isShared: shared, now: clock.function))
    }

    /// Answers `answer <n>` with `status` and the headers.
    private func counting(
        _ counter: HitCounter, status: Int = 200, headers: [(name: String, value: String)]
    ) -> @Sendable (ServerRequest) async -> ServerResponse {
        { _ in ServerResponse(status: status, headers: headers + [("Content-Type", "text/plain")], body: Array("answer \(counter.next())".utf8)) }
    }

    // MARK: Storability (RFC 9111 §3)

    @Test(arguments: [
        (201, "", false), (500, "", false), (500, "no-cache", false), (503, "s-maxage=60", false),
        (500, "max-age=60", true), (201, "public", true), (503, "private", true), (404, "", true), (204, "", true),
    ])
    func httpStoresOnlyWhatRFC9111Section3Allows(_ status: Int, cacheControl: String, stored: Bool) async throws {
        let clock = CacheTestClock()
        let cache = makeCache(clock: clock)
        let counter = HitCounter()
        let headers: [(name: String, value: String)] = cacheControl.isEmpty ? [] : [("Cache-Control", cacheControl)]
        try await withCachedLoopback(cache: cache, handler: counting(counter, status: status, headers: headers)) { server, client in
            let first = try await client.response(for: AnyStatusCall(path: "s"))
            #expect(first.status.code == status)
            #expect(await cache.statistics.stores == (stored ? 1 : 0))
            if stored {
                let again = try await client.response(for: AnyStatusCall(path: "s", policy: .cacheOnly()))
                #expect(again.source == .cache)
                #expect(again.status.code == status)
            } else {
                let error = await #expect(throws: CurlewError.self) { try await client.send(AnyStatusCall(path: "s", policy: .cacheOnly())) }
                #expect(error?.code == .cacheMiss, "a \(status) with `\(cacheControl)` is not stored, so .cacheOnly finds nothing")
            }
            #expect(server.requestCount == 1)
        }
    }

    @Test func anExpiresHeaderMakesAnyStatusStorable() async throws {
        let base = Date()
        let clock = CacheTestClock(base)
        let cache = makeCache(clock: clock)
        let counter = HitCounter()
        let headers = [("Date", httpDate(base)), ("Expires", httpDate(base.addingTimeInterval(600)))]
        try await withCachedLoopback(cache: cache, handler: counting(counter, status: 500, headers: headers)) { server, client in
            _ = try await client.send(AnyStatusCall(path: "e"))
            clock.advance(60)
            let again = try await client.response(for: AnyStatusCall(path: "e"))
            #expect(again.source == .cache)
            #expect(again.value == "answer 1")
            #expect(server.requestCount == 1)
        }
    }

    @Test(arguments: [CachePolicy.maxAge(.hours(1)), .writeOnly, .networkFirst(staleFor: .hours(1))])
    func theAppsOwnPoliciesStillStoreAnyAcceptedStatus(_ policy: CachePolicy) async throws {
        let clock = CacheTestClock()
        let cache = makeCache(clock: clock)
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, handler: counting(counter, status: 201, headers: [])) { server, client in
            _ = try await client.send(AnyStatusCall(path: "c", policy: policy))
            #expect(await cache.statistics.stores == 1, "\(policy) stores what the endpoint accepted, as documented")
            let stored = try await client.response(for: AnyStatusCall(path: "c", policy: .cacheOnly()))
            #expect(stored.status.code == 201)
            #expect(server.requestCount == 1)
        }
    }

    // MARK: The request's own directives (RFC 9111 §5.2.1)

    @Test func aRequestMaxAgeRefusesAStoredAnswerOlderThanIt() async throws {
        let clock = CacheTestClock()
        let counter = HitCounter()
        try await withCachedLoopback(cache: makeCache(clock: clock), handler: counting(counter, headers: [("Cache-Control", "max-age=600")])) { server, client in
            _ = try await client.send(AnyStatusCall(path: "a"))
            clock.advance(100)
            let young = try await client.response(for: AnyStatusCall(path: "a", headers: ["Cache-Control": "max-age=300"]))
            #expect(young.source == .cache, "100 s old, the request accepts 300")
            #expect(server.requestCount == 1)
            let strict = try await client.response(for: AnyStatusCall(path: "a", headers: ["Cache-Control": "max-age=60"]))
            #expect(strict.source == .network, "100 s old, the request accepts 60")
            #expect(strict.value == "answer 2")
            #expect(server.requestCount == 2)
        }
    }

    @Test func aRequestMinFreshWantsAnAnswerThatStaysFreshThatLong() async throws {
        let clock = CacheTestClock()
        let counter = HitCounter()
        try await withCachedLoopback(cache: makeCache(clock: clock), handler: counting(counter, headers: [("Cache-Control", "max-age=600")])) { server, client in
            _ = try await client.send(AnyStatusCall(path: "m"))
            clock.advance(500)
            let enough = try await client.response(for: AnyStatusCall(path: "m", headers: ["Cache-Control": "min-fresh=60"]))
            #expect(enough.source == .cache, "fresh for 100 s more")
            #expect(server.requestCount == 1)
            let more = try await client.response(for: AnyStatusCall(path: "m", headers: ["Cache-Control": "min-fresh=120"]))
            #expect(more.source == .network, "fresh for only 100 s more")
            #expect(more.value == "answer 2")
            #expect(server.requestCount == 2)
        }
    }

    @Test func aRequestMaxStaleAcceptsAStaleAnswerMarkedStale() async throws {
        let clock = CacheTestClock()
        let counter = HitCounter()
        try await withCachedLoopback(cache: makeCache(clock: clock), handler: counting(counter, headers: [("Cache-Control", "max-age=60")])) { server, client in
            _ = try await client.send(AnyStatusCall(path: "s"))
            clock.advance(100)
            let within = try await client.response(for: AnyStatusCall(path: "s", headers: ["Cache-Control": "max-stale=60"]))
            #expect(within.source == .stale, "stale by 40 s, the request accepts 60")
            #expect(within.value == "answer 1")
            let any = try await client.response(for: AnyStatusCall(path: "s", headers: ["Cache-Control": "max-stale"]))
            #expect(any.source == .stale, "a bare max-stale accepts any staleness")
            #expect(server.requestCount == 1)
            let beyond = try await client.response(for: AnyStatusCall(path: "s", headers: ["Cache-Control": "max-stale=30"]))
            #expect(beyond.source == .network, "stale by 40 s, the request accepts 30")
            #expect(beyond.value == "answer 2")
            #expect(server.requestCount == 2)
        }
    }

    @Test(arguments: ["max-age=60, must-revalidate", "no-cache"])
    func aRequestMaxStaleNeverOverridesTheServersRefusal(_ cacheControl: String) async throws {
        let clock = CacheTestClock()
        let counter = HitCounter()
        try await withCachedLoopback(cache: makeCache(clock: clock), handler: counting(counter, headers: [("Cache-Control", cacheControl)])) { server, client in
            _ = try await client.send(AnyStatusCall(path: "r"))
            clock.advance(100)
            let again = try await client.response(for: AnyStatusCall(path: "r", headers: ["Cache-Control": "max-stale"]))
            #expect(again.source == .network, "`\(cacheControl)` forbids serving the answer stale (RFC 9111 §4.2.4)")
            #expect(server.requestCount == 2)
        }
    }

    @Test func onlyIfCachedNeverContactsTheServer() async throws {
        let clock = CacheTestClock()
        let cache = makeCache(clock: clock)
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, handler: counting(counter, headers: [("Cache-Control", "max-age=60")])) { server, client in
            let onlyIfCached = ["Cache-Control": "only-if-cached"]
            let absent = await #expect(throws: CurlewError.self) { try await client.send(AnyStatusCall(path: "o", headers: onlyIfCached)) }
            #expect(absent?.code == .cacheMiss)
            #expect(server.requestCount == 0)
            _ = try await client.send(AnyStatusCall(path: "o"))
            let fresh = try await client.response(for: AnyStatusCall(path: "o", headers: onlyIfCached))
            #expect(fresh.source == .cache)
            #expect(fresh.value == "answer 1")
            clock.advance(100)
            let stale = await #expect(throws: CurlewError.self) { try await client.send(AnyStatusCall(path: "o", headers: onlyIfCached)) }
            #expect(stale?.code == .cacheMiss, "stale, and the request did not accept stale answers")
            let accepted = try await client.response(for: AnyStatusCall(path: "o", headers: ["Cache-Control": "only-if-cached, max-stale=300"]))
            #expect(accepted.source == .stale)
            #expect(accepted.value == "answer 1")
            #expect(server.requestCount == 1)
            #expect(await cache.statistics.misses == 3, "two refused only-if-cached lookups and the plain first fetch")
        }
    }
}
