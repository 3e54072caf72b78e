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

    // MARK: Stale answers the server allows (RFC 5861)

    @Test func staleWhileRevalidateServesTheStaleAnswerAndRevalidatesOnceInTheBackground() async throws {
        let clock = CacheTestClock()
        let cache = makeCache(clock: clock)
        let counter = HitCounter()
        let gate = TestGate()
        let handler: @Sendable (ServerRequest) async -> ServerResponse = { request in
            let number = counter.next()
            // The background revalidation waits here until the test has made its second stale call.
            if number == 2 { while !gate.isOpen, !request.connection.isClosed { try? await Task.sleep(for: .milliseconds(5)) } }
            let headers = [("Cache-Control", "max-age=10, stale-while-revalidate=600"), ("Content-Type", "text/plain")]
            return ServerResponse(status: 200, headers: headers, body: Array("answer \(number)".utf8))
        }
        try await withCachedLoopback(cache: cache, handler: handler) { server, client in
            _ = try await client.send(AnyStatusCall(path: "w"))
            clock.advance(100)
            let stale = try await client.response(for: AnyStatusCall(path: "w"))
            #expect(stale.source == .stale, "stale by 90 s, within stale-while-revalidate=600")
            #expect(stale.value == "answer 1")
            await waitForRequests(server, count: 2)
            let again = try await client.response(for: AnyStatusCall(path: "w"))
            #expect(again.source == .stale, "the revalidation has not answered yet")
            #expect(again.value == "answer 1")
            gate.open()
            #expect(await eventually { await cache.statistics.stores == 2 })
            let fresh = try await client.response(for: AnyStatusCall(path: "w"))
            #expect(fresh.source == .cache)
            #expect(fresh.value == "answer 2", "the background revalidation's answer was stored")
            #expect(received(server.requests[1], "Cache-Control") == nil)
            #expect(server.requestCount == 2, "one revalidation in the background, however many stale calls")
            #expect(await cache.statistics.hits == 3)
        }
    }

    /// A stale answer served within a caller's 300 ms deadline is revalidated in the background
    /// after the call returned: the server takes 700 ms, and the revalidation still stores its
    /// answer (the caller's deadline budgets the call, not the work that outlives it).
    @Test(.timingSensitive) func aBackgroundRevalidationIsNotBoundByTheCallersDeadline() async throws {
        let clock = CacheTestClock()
        let cache = makeCache(clock: clock)
        let counter = HitCounter()
        let handler: @Sendable (ServerRequest) async -> ServerResponse = { _ in
            let number = counter.next()
            if number == 2 { try? await Task.sleep(for: .milliseconds(700)) }
            let headers = [("Cache-Control", "max-age=10, stale-while-revalidate=600"), ("Content-Type", "text/plain")]
            return ServerResponse(status: 200, headers: headers, body: Array("answer \(number)".utf8))
        }
        try await withCachedLoopback(cache: cache, handler: handler) { server, client in
            _ = try await client.send(AnyStatusCall(path: "b"))
            clock.advance(100)
            let stale = try await withDeadline(in: .milliseconds(300)) { try await client.response(for: AnyStatusCall(path: "b")) }
            #expect(stale.source == .stale)
            #expect(await eventually(within: 10) { await cache.statistics.stores == 2 })
            let fresh = try await client.response(for: AnyStatusCall(path: "b"))
            #expect(fresh.value == "answer 2")
            #expect(server.requestCount == 2)
        }
    }

    @Test func staleWhileRevalidateEndsAtItsWindowAndNeverCoversMustRevalidate() async throws {
        let clock = CacheTestClock()
        let counter = HitCounter()
        try await withCachedLoopback(
            cache: makeCache(clock: clock), handler: counting(counter, headers: [("Cache-Control", "max-age=10, stale-while-revalidate=60")])
        ) { server, client in
            _ = try await client.send(AnyStatusCall(path: "x"))
            clock.advance(100)
            let beyond = try await client.response(for: AnyStatusCall(path: "x"))
            #expect(beyond.source == .network, "stale by 90 s, beyond stale-while-revalidate=60")
            #expect(beyond.value == "answer 2")
            #expect(server.requestCount == 2)
        }
        let strict = HitCounter()
        try await withCachedLoopback(
            cache: makeCache(clock: clock),
            handler: counting(strict, headers: [("Cache-Control", "max-age=10, must-revalidate, stale-while-revalidate=600")])
        ) { server, client in
            _ = try await client.send(AnyStatusCall(path: "y"))
            clock.advance(100)
            let again = try await client.response(for: AnyStatusCall(path: "y"))
            #expect(again.source == .network, "must-revalidate: never served stale")
            #expect(server.requestCount == 2)
        }
    }

    /// Answers `good` with `headers` first, then `status` with the body `down`.
    private func failingAfterFirst(_ counter: HitCounter, status: Int, headers: [(name: String, value: String)]) -> @Sendable (ServerRequest) async -> ServerResponse {
        { _ in
            counter.next() == 1
                ? ServerResponse(status: 200, headers: headers + [("Content-Type", "text/plain")], body: Array("good".utf8))
                : ServerResponse(status: status, headers: [("Content-Type", "text/plain")], body: Array("down".utf8))
        }
    }

    @Test(arguments: [500, 502, 503, 504])
    func staleIfErrorServesTheStaleAnswerWhenTheServerFails(_ status: Int) async throws {
        let clock = CacheTestClock()
        let cache = makeCache(clock: clock)
        let counter = HitCounter()
        let headers = [("Cache-Control", "max-age=10, stale-if-error=600")]
        try await withCachedLoopback(cache: cache, handler: failingAfterFirst(counter, status: status, headers: headers)) { server, client in
            _ = try await client.send(CachedText(path: "e", policy: .http))
            clock.advance(100)
            let stale = try await client.response(for: CachedText(path: "e", policy: .http))
            #expect(stale.source == .stale, "the server answered \(status); stale by 90 s, within stale-if-error=600")
            #expect(stale.value == "good")
            #expect(server.requestCount == 2)
            clock.advance(600)
            let error = await #expect(throws: CurlewError.self) { try await client.send(CachedText(path: "e", policy: .http)) }
            #expect(error?.code == .unacceptableStatus, "stale by 690 s, beyond stale-if-error=600")
            #expect(error?.status?.code == status)
            #expect(server.requestCount == 3)
        }
    }

    @Test func staleIfErrorCoversAnErrorStatusTheEndpointAcceptsAndNotA404() async throws {
        let clock = CacheTestClock()
        let cache = makeCache(clock: clock)
        let counter = HitCounter()
        let headers = [("Cache-Control", "max-age=10, stale-if-error=600")]
        try await withCachedLoopback(cache: cache, handler: failingAfterFirst(counter, status: 503, headers: headers)) { server, client in
            _ = try await client.send(AnyStatusCall(path: "a"))
            clock.advance(100)
            let stale = try await client.response(for: AnyStatusCall(path: "a"))
            #expect(stale.source == .stale)
            #expect(stale.status.code == 200)
            #expect(stale.value == "good")
            #expect(await cache.statistics.stores == 1, "the 503 replaced nothing")
        }
        let missing = HitCounter()
        try await withCachedLoopback(cache: makeCache(clock: clock), handler: failingAfterFirst(missing, status: 404, headers: headers)) { server, client in
            _ = try await client.send(AnyStatusCall(path: "b"))
            clock.advance(100)
            let answer = try await client.response(for: AnyStatusCall(path: "b"))
            #expect(answer.source == .network, "a 404 is the server's answer, not an error")
            #expect(answer.status.code == 404)
            #expect(server.requestCount == 2)
        }
    }

    /// The request's own `stale-if-error=N` (RFC 5861 §4) accepts a stale answer when the server
    /// fails, though the server gave none; stale beyond N, or without it, the `503` comes back.
    @Test func aRequestStaleIfErrorAcceptsAStaleAnswerWhenTheServerFails() async throws {
        let clock = CacheTestClock()
        let cache = makeCache(clock: clock)
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, handler: failingAfterFirst(counter, status: 503, headers: [("Cache-Control", "max-age=10")])) {
            server, client in
            _ = try await client.send(AnyStatusCall(path: "q"))
            clock.advance(100)
            let stale = try await client.response(for: AnyStatusCall(path: "q", headers: ["Cache-Control": "stale-if-error=300"]))
            #expect(stale.source == .stale, "90 s past its lifetime, within the request's 300")
            #expect(stale.value == "good")
            let plain = try await client.response(for: AnyStatusCall(path: "q"))
            #expect(plain.status.code == 503)
            let tooStale = try await client.response(for: AnyStatusCall(path: "q", headers: ["Cache-Control": "stale-if-error=60"]))
            #expect(tooStale.status.code == 503, "90 s past its lifetime, beyond the request's 60")
            #expect(server.requestCount == 4)
            #expect(await cache.statistics.stores == 1)
        }
    }

    @Test func staleIfErrorServesTheStaleAnswerWhenTheServerCannotBeReached() async throws {
        let clock = CacheTestClock()
        let cache = makeCache(clock: clock)
        let server = try await LoopbackServer.start { _ in
            ServerResponse(status: 200, headers: [("Cache-Control", "max-age=10, stale-if-error=600")], body: Array("kept".utf8))
        }
        let transport = CurlTransport()
        var oneAttempt = TransferOptions()
        oneAttempt.maximumConnectAttempts = 1
        let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [cache]), transport: transport)
        let offline = APIClient(
            configuration: ClientConfiguration(baseURL: refusingBaseURL, transferOptions: oneAttempt, middleware: [cache]), transport: transport)
        let request = CachedText(path: "u", policy: .http, key: "u")
        do {
            _ = try await client.send(request)
            await server.shutdown()
            clock.advance(100)
            let stale = try await offline.response(for: request)
            #expect(stale.source == .stale)
            #expect(stale.value == "kept")
            clock.advance(600)
            let error = await #expect(throws: CurlewError.self) { try await offline.send(request) }
            #expect(error?.code == .cannotConnect, "beyond stale-if-error=600")
        } catch {
            await transport.shutdown()
            throw error
        }
        await transport.shutdown()
    }

    // MARK: Age (RFC 9111 §4, §5.1)

    @Test(arguments: [CachePolicy.http, .maxAge(.hours(1)), .cacheOnly()])
    func aHitCarriesItsCurrentAgeNotTheStoredOne(_ policy: CachePolicy) async throws {
        let clock = CacheTestClock()
        let counter = HitCounter()
        try await withCachedLoopback(
            cache: makeCache(clock: clock), handler: counting(counter, headers: [("Cache-Control", "max-age=600"), ("Age", "50")])
        ) { server, client in
            let first = try await client.response(for: AnyStatusCall(path: "g"))
            #expect(first.headers[.age] == "50", "the network answer is as the server sent it")
            clock.advance(100)
            let hit = try await client.response(for: AnyStatusCall(path: "g", policy: policy))
            #expect(hit.source == .cache)
            #expect(hit.headers[values: .age] == ["150"], "50 s old on arrival, 100 s in the cache")
            #expect(server.requestCount == 1)
        }
    }

    @Test func aHitOfAnAnswerWithoutAgeGetsOne() async throws {
        let clock = CacheTestClock()
        let counter = HitCounter()
        try await withCachedLoopback(cache: makeCache(clock: clock), handler: counting(counter, headers: [("Cache-Control", "max-age=600")])) { server, client in
            _ = try await client.send(AnyStatusCall(path: "n"))
            clock.advance(42)
            let hit = try await client.response(for: AnyStatusCall(path: "n"))
            #expect(hit.source == .cache)
            #expect(hit.headers[.age] == "42")
        }
    }

    @Test func a304WithoutAgeDoesNotKeepTheStoredAge() async throws {
        let clock = CacheTestClock()
        let counter = HitCounter()
        let handler: @Sendable (ServerRequest) async -> ServerResponse = { request in
            counter.next() == 1
                ? ServerResponse(
                    status: 200, headers: [("Cache-Control", "max-age=100"), ("Age", "90"), ("ETag", "\"a\""), ("Content-Type", "text/plain")],
                    body: Array("kept".utf8))
                : ServerResponse(status: 304, headers: [("Cache-Control", "max-age=100"), ("ETag", "\"a\"")])
        }
        try await withCachedLoopback(cache: makeCache(clock: clock), handler: handler) { server, client in
            _ = try await client.send(AnyStatusCall(path: "r"))
            clock.advance(20)
            let revalidated = try await client.response(for: AnyStatusCall(path: "r"))
            #expect(revalidated.source == .revalidated, "90 + 20 s old: stale")
            #expect(revalidated.headers[.age] == nil, "the 304 said no Age, so the stored 90 is gone")
            #expect(received(server.requests[1], "If-None-Match") == "\"a\"")
            clock.advance(30)
            let hit = try await client.response(for: AnyStatusCall(path: "r"))
            #expect(hit.source == .cache, "30 s since the 304, not 90 + 30")
            #expect(hit.value == "kept")
            #expect(hit.headers[.age] == "30")
            #expect(server.requestCount == 2)
        }
    }

    /// A `304` without `Date` is dated when it arrived (RFC 9110 §6.6.1): the refreshed answer
    /// is fresh again, not as old as the answer first stored (whose `Date` would otherwise stay).
    @Test func a304WithoutDateDatesTheRefreshedAnswerWhenItArrived() async throws {
        let start = Date(timeIntervalSince1970: 1_780_000_000)
        let clock = CacheTestClock(start)
        let counter = HitCounter()
        let handler: @Sendable (ServerRequest) async -> ServerResponse = { request in
            counter.next() == 1
                ? ServerResponse(
                    status: 200, headers: [("Cache-Control", "max-age=100"), ("Date", httpDate(start)), ("ETag", "\"d\""), ("Content-Type", "text/plain")],
                    body: Array("dated".utf8))
                : ServerResponse(status: 304, headers: [("Cache-Control", "max-age=100"), ("ETag", "\"d\"")])
        }
        try await withCachedLoopback(cache: makeCache(clock: clock), handler: handler) { server, client in
            _ = try await client.send(AnyStatusCall(path: "d"))
            clock.advance(150)
            let revalidated = try await client.response(for: AnyStatusCall(path: "d"))
            #expect(revalidated.source == .revalidated)
            #expect(revalidated.headers[.date] == httpDate(start.addingTimeInterval(150)))
            clock.advance(10)
            let hit = try await client.response(for: AnyStatusCall(path: "d"))
            #expect(hit.source == .cache, "10 s since the 304, not 160 since the first Date")
            #expect(hit.headers[.age] == "10")
            #expect(server.requestCount == 2)
        }
    }

    /// A `200` without `Date` is stored dated when it arrived (RFC 9110 §6.6.1: a cache adds
    /// one): a hit served from it ten seconds later says when it was made and is 10 s old; an
    /// answer with its own `Date` keeps it.
    @Test func anAnswerWithoutDateIsStoredDatedWhenItArrived() async throws {
        let start = Date(timeIntervalSince1970: 1_780_000_000)
        let clock = CacheTestClock(start)
        let handler: @Sendable (ServerRequest) async -> ServerResponse = { request in
            var headers = [("Cache-Control", "max-age=100"), ("Content-Type", "text/plain")]
            if request.path == "/dated" { headers.append(("Date", httpDate(start.addingTimeInterval(-5)))) }
            return ServerResponse(status: 200, headers: headers, body: Array("answer".utf8))
        }
        try await withCachedLoopback(cache: makeCache(clock: clock), handler: handler) { server, client in
            let first = try await client.response(for: AnyStatusCall(path: "undated"))
            #expect(first.source == .network)
            #expect(first.headers[.date] == nil, "the caller sees the answer as the server sent it")
            _ = try await client.send(AnyStatusCall(path: "dated"))
            clock.advance(10)
            let undated = try await client.response(for: AnyStatusCall(path: "undated"))
            #expect(undated.source == .cache)
            #expect(undated.headers[fields: .date].map(\.value) == [httpDate(start)])
            #expect(undated.headers[.age] == "10")
            let dated = try await client.response(for: AnyStatusCall(path: "dated"))
            #expect(dated.source == .cache)
            #expect(dated.headers[fields: .date].map(\.value) == [httpDate(start.addingTimeInterval(-5))])
            #expect(dated.headers[.age] == "15")
            #expect(server.requestCount == 2)
        }
    }

    @Test(arguments: [0.0, 784_111_777, 951_782_400, 1_780_000_000.75, -86_401, 4_102_444_800])
    func anHTTPDateIsWrittenAsItIsRead(_ seconds: Double) {
        let date = Date(timeIntervalSince1970: seconds)
        let text = CacheDateParser.format(date)
        #expect(text == httpDate(date))
        #expect(CacheDateParser.parse(text) == Date(timeIntervalSince1970: seconds.rounded(.down)))
    }
}
