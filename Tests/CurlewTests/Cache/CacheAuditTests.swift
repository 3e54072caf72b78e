@testable import Curlew
@testable import CurlewCore
import CurlewTesting
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

/// A GET that accepts every status, so error statuses reach the cache as answers.
struct AnyStatusText: Endpoint {
    typealias Response = String
    var path: String
    var options: RequestOptions {
        var options = RequestOptions()
        options.cache = .http
        return options
    }

    func accepts(_ status: HTTPResponse.Status) -> Bool { true }
}

/// RFC 9111 rules a demanding user checks against the counting loopback server, with a movable
/// clock: what the server saw, which validators it received, where each answer came from.
@Suite("Cache audit: RFC 9111 rules against a counting server", .timeLimit(.minutes(2)))
struct CacheAuditRuleTests {
    private func makeCache(clock: CacheTestClock, storage: any CacheStorage = MemoryCacheStorage()) -> ResponseCache {
        ResponseCache(configuration: .init(storage: storage, credentials: .anonymous, now: clock.function))
    }

    /// Answers `answer <n>` with the headers.
    private func counting(_ counter: HitCounter, headers: [(name: String, value: String)]) -> @Sendable (ServerRequest) async -> ServerResponse {
        { _ in ServerResponse(status: 200, headers: headers + [("Content-Type", "text/plain")], body: Array("answer \(counter.next())".utf8)) }
    }

    @Test(arguments: ["max-age=inf", "max-age=infinity", "max-age=1e9", "max-age=0x1000", "max-age=\"inf\"", "max-age=+600"])
    func aLifetimeThatIsNotDeltaSecondsIsStaleNotForever(_ cacheControl: String) async throws {
        let clock = CacheTestClock()
        let counter = HitCounter()
        try await withCachedLoopback(cache: makeCache(clock: clock), handler: counting(counter, headers: [("Cache-Control", cacheControl)])) { server, client in
            #expect(try await client.send(CachedText(path: "n", policy: .http)) == "answer 1")
            clock.advance(1)
            let again = try await client.response(for: CachedText(path: "n", policy: .http))
            #expect(again.value == "answer 2", "`\(cacheControl)` is no delta-seconds: the answer is stale, not fresh for ever")
            #expect(again.source == .network)
            #expect(server.requestCount == 2)
        }
    }

    @Test func aHugeMaxAgeIsCappedNotRefused() async throws {
        let clock = CacheTestClock()
        let counter = HitCounter()
        let huge = "max-age=99999999999999999999999999"
        try await withCachedLoopback(cache: makeCache(clock: clock), handler: counting(counter, headers: [("Cache-Control", huge)])) { server, client in
            _ = try await client.send(CachedText(path: "n", policy: .http))
            clock.advance(86_400 * 365)
            let again = try await client.response(for: CachedText(path: "n", policy: .http))
            #expect(again.source == .cache, "2^31 seconds is 68 years (RFC 9111 §1.2.2)")
            #expect(server.requestCount == 1)
        }
    }

    @Test(arguments: [[("Cache-Control", "max-age=5"), ("Cache-Control", "max-age=3600")], [("Cache-Control", "max-age=5, max-age=3600")]])
    func theFirstOfTwoMaxAgesCounts(_ headers: [(String, String)]) async throws {
        let clock = CacheTestClock()
        let counter = HitCounter()
        let fields = headers.map { (name: $0.0, value: $0.1) }
        try await withCachedLoopback(cache: makeCache(clock: clock), handler: counting(counter, headers: fields)) { server, client in
            _ = try await client.send(CachedText(path: "twice", policy: .http))
            clock.advance(4)
            #expect(try await client.response(for: CachedText(path: "twice", policy: .http)).source == .cache)
            clock.advance(2)
            let late = try await client.response(for: CachedText(path: "twice", policy: .http))
            #expect(late.value == "answer 2", "RFC 9111 §4.2.1: the first occurrence is used, not the longest or the last")
            #expect(server.requestCount == 2)
        }
    }

    @Test func aRequestNoStoreIsServedNothingNewAndStoresNothing() async throws {
        let storage = MemoryCacheStorage()
        let counter = HitCounter()
        try await withCachedLoopback(cache: makeCache(clock: CacheTestClock(), storage: storage), handler: counting(counter, headers: [("Cache-Control", "max-age=600")])) { server, client in
            let noStore = CachedText(path: "s", headers: ["Cache-Control": "no-store"], policy: .http)
            _ = try await client.send(noStore)
            _ = try await client.send(noStore)
            #expect(server.requestCount == 2)
            #expect(await storage.count == 0)
        }
    }

    @Test(arguments: ["max-age=0", "no-cache", "max-age=600, no-cache", "s-maxage=600"])
    func anAnswerThatMustBeRevalidatedAsksWithItsValidatorsEachTime(_ cacheControl: String) async throws {
        let counter = HitCounter()
        try await withCachedLoopback(
            cache: makeCache(clock: CacheTestClock()),
            handler: { request in
                let n = counter.next()
                let headers = [("Cache-Control", cacheControl), ("ETag", "\"e1\""), ("X-N", "\(n)")]
                if received(request, "If-None-Match") == "\"e1\"" { return ServerResponse(status: 304, headers: headers) }
                return ServerResponse(status: 200, headers: headers, body: Array("body".utf8))
            }
        ) { server, client in
            #expect(try await client.response(for: CachedText(path: "r", policy: .http)).source == .network)
            let second = try await client.response(for: CachedText(path: "r", policy: .http))
            let third = try await client.response(for: CachedText(path: "r", policy: .http))
            #expect([second.source, third.source] == [.revalidated, .revalidated])
            #expect(third.value == "body")
            #expect(third.headers[HTTPField.Name("X-N")!] == "3")
            #expect(server.requests.map { received($0, "If-None-Match") } == [nil, "\"e1\"", "\"e1\""])
        }
    }

    @Test(arguments: ["0", "yesterday", "Thu, 01 Jan 1970 00:00:00 GMT"])
    func anExpiresInThePastOrInvalidIsStale(_ expires: String) async throws {
        let counter = HitCounter()
        try await withCachedLoopback(cache: makeCache(clock: CacheTestClock()), handler: counting(counter, headers: [("Expires", expires)])) { server, client in
            _ = try await client.send(CachedText(path: "x", policy: .http))
            #expect(try await client.send(CachedText(path: "x", policy: .http)) == "answer 2")
            #expect(server.requestCount == 2)
        }
    }

    @Test func expiresCountsFromTheServersDateSoAClockSkewDoesNotShortenIt() async throws {
        // The server's clock is ten minutes behind ours: Expires − Date is still 120 s, and the
        // apparent age (our arrival − its Date, RFC 9111 §4.2.3) makes the answer 600 s old on
        // arrival, so it is stale — exactly as the RFC's arithmetic says.
        let base = Date()
        let clock = CacheTestClock(base)
        let counter = HitCounter()
        let serverNow = base.addingTimeInterval(-600)
        let headers = [("Date", httpDate(serverNow)), ("Expires", httpDate(serverNow.addingTimeInterval(120)))]
        try await withCachedLoopback(cache: makeCache(clock: clock), handler: counting(counter, headers: headers)) { server, client in
            _ = try await client.send(CachedText(path: "skew", policy: .http))
            #expect(try await client.response(for: CachedText(path: "skew", policy: .http)).source == .network)
            #expect(server.requestCount == 2)
        }
    }

    @Test func aStaleMustRevalidateAnswerIsNeverServedWhenTheServerFails() async throws {
        let clock = CacheTestClock()
        let counter = HitCounter()
        try await withCachedLoopback(
            cache: makeCache(clock: clock),
            handler: { _ in
                counter.next() == 1
                    ? ServerResponse(status: 200, headers: [("Cache-Control", "max-age=10, must-revalidate"), ("ETag", "\"m\"")], body: Array("kept".utf8))
                    : ServerResponse(status: 503, headers: [("Content-Type", "text/plain")], body: Array("down".utf8))
            }
        ) { server, client in
            _ = try await client.send(CachedText(path: "m", policy: .http))
            clock.advance(11)
            let error = await #expect(throws: CurlewError.self) { try await client.send(CachedText(path: "m", policy: .http)) }
            #expect(error?.code == .unacceptableStatus)
            #expect(error?.status?.code == 503)
            #expect(received(server.requests[1], "If-None-Match") == "\"m\"")
            #expect(server.requestCount == 2)
        }
    }

    @Test func a304RefreshesTheStoredLifetimeAndHeaders() async throws {
        let clock = CacheTestClock()
        let counter = HitCounter()
        try await withCachedLoopback(
            cache: makeCache(clock: clock),
            handler: { request in
                let n = counter.next()
                if n == 1 {
                    return ServerResponse(
                        status: 200, headers: [("Cache-Control", "max-age=10"), ("ETag", "\"a\""), ("X-Revision", "1")], body: Array("one".utf8))
                }
                if received(request, "If-None-Match") == "\"a\"" {
                    return ServerResponse(status: 304, headers: [("Cache-Control", "max-age=600"), ("ETag", "W/\"a\""), ("X-Revision", "2")])
                }
                return ServerResponse(status: 200, headers: [("ETag", "\"c\"")], body: Array("changed".utf8))
            }
        ) { server, client in
            _ = try await client.send(CachedText(path: "r", policy: .http))
            clock.advance(11)
            let refreshed = try await client.response(for: CachedText(path: "r", policy: .http))
            #expect(refreshed.source == .revalidated)
            #expect(refreshed.value == "one")
            #expect(refreshed.headers[HTTPField.Name("X-Revision")!] == "2", "RFC 9111 §4.3.4: the 304's headers replace the stored ones")
            #expect(refreshed.headers[.eTag] == "W/\"a\"")
            clock.advance(500)
            #expect(try await client.response(for: CachedText(path: "r", policy: .http)).source == .cache, "the 304's max-age=600 now counts")
            #expect(server.requestCount == 2)
            clock.advance(200)
            _ = try await client.send(CachedText(path: "r", policy: .http))
            #expect(received(server.requests[2], "If-None-Match") == "W/\"a\"", "the next revalidation sends the refreshed validator")
        }
    }

    /// RFC 9111 §4.3.4: a `304` that names another entity tag than the stored answer's does not
    /// describe it, and must not refresh it. The client asks again without validators and gets
    /// the current answer: the stored bytes are never served under the other version's headers.
    @Test func a304NamingAnotherEntityTagIsNotTakenForTheStoredAnswer() async throws {
        let clock = CacheTestClock()
        let counter = HitCounter()
        try await withCachedLoopback(
            cache: makeCache(clock: clock),
            handler: { request in
                let n = counter.next()
                if n == 1 { return ServerResponse(status: 200, headers: [("Cache-Control", "max-age=10"), ("ETag", "\"v1\"")], body: Array("one".utf8)) }
                if received(request, "If-None-Match") != nil {
                    // A confused cache in front of the origin: it confirms a version it was not asked about.
                    return ServerResponse(status: 304, headers: [("Cache-Control", "max-age=600"), ("ETag", "\"v2\"")])
                }
                return ServerResponse(status: 200, headers: [("Cache-Control", "max-age=600"), ("ETag", "\"v2\"")], body: Array("two".utf8))
            }
        ) { server, client in
            _ = try await client.send(CachedText(path: "r", policy: .http))
            clock.advance(11)
            let answer = try await client.response(for: CachedText(path: "r", policy: .http))
            #expect(answer.value == "two")
            #expect(answer.source == .network)
            #expect(answer.headers[.eTag] == "\"v2\"")
            #expect(server.requests.map { received($0, "If-None-Match") } == [nil, "\"v1\"", nil])
            // The current answer was stored: fresh for its max-age.
            clock.advance(100)
            #expect(try await client.send(CachedText(path: "r", policy: .http)) == "two")
            #expect(server.requestCount == 3)
        }
    }

    /// RFC 9111 §4.3.4: a `304` with a strong entity tag names the representation it confirms;
    /// a stored answer validated by date (no tag) is not that one and is not refreshed: the client
    /// asks again without validators. A weak tag still refreshes it.
    @Test(arguments: [("\"v2\"", false), ("W/\"v2\"", true)])
    func a304WithAStrongTagDoesNotRefreshAnAnswerStoredWithoutOne(_ tag: String, refreshes: Bool) async throws {
        let clock = CacheTestClock()
        let counter = HitCounter()
        let modified = "Sun, 06 Nov 1994 08:49:37 GMT"
        try await withCachedLoopback(
            cache: makeCache(clock: clock),
            handler: { request in
                let n = counter.next()
                if n == 1 { return ServerResponse(status: 200, headers: [("Cache-Control", "max-age=10"), ("Last-Modified", modified)], body: Array("one".utf8)) }
                if received(request, "If-Modified-Since") != nil {
                    return ServerResponse(status: 304, headers: [("Cache-Control", "max-age=600"), ("ETag", tag)])
                }
                return ServerResponse(status: 200, headers: [("Cache-Control", "max-age=600"), ("ETag", "\"v2\"")], body: Array("two".utf8))
            }
        ) { server, client in
            _ = try await client.send(CachedText(path: "r", policy: .http))
            clock.advance(11)
            let answer = try await client.response(for: CachedText(path: "r", policy: .http))
            #expect(answer.value == (refreshes ? "one" : "two"))
            #expect(answer.source == (refreshes ? .revalidated : .network))
            #expect(server.requests.map { received($0, "If-Modified-Since") } == (refreshes ? [nil, modified] : [nil, modified, nil]))
        }
    }

    @Test(arguments: [(404, true), (410, true), (501, true), (500, false), (503, false), (201, false)])
    func onlyHeuristicallyCacheableStatusesGetAHeuristicLifetime(_ status: Int, heuristic: Bool) async throws {
        let base = Date()
        let clock = CacheTestClock(base)
        let counter = HitCounter()
        let headers = [("Date", httpDate(base)), ("Last-Modified", httpDate(base.addingTimeInterval(-36_000)))]
        try await withCachedLoopback(
            cache: makeCache(clock: clock),
            handler: { _ in ServerResponse(status: status, headers: headers + [("Content-Type", "text/plain")], body: Array("answer \(counter.next())".utf8)) }
        ) { server, client in
            let first = try await client.response(for: AnyStatusText(path: "s"))
            #expect(first.status.code == status)
            clock.advance(60)
            let second = try await client.response(for: AnyStatusText(path: "s"))
            #expect(second.source == (heuristic ? .cache : .network))
            #expect(second.status.code == status)
            #expect(server.requestCount == (heuristic ? 1 : 2))
        }
    }

    @Test func aStoredAnswerDamagedOnDiskIsFetchedAgainByANewClient() async throws {
        let directory = makeCacheDirectory("audit-damage")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let counter = HitCounter()
        let handler = counting(counter, headers: [("Cache-Control", "max-age=600")])
        let first = makeCache(clock: CacheTestClock(), storage: DiskCacheStorage(directory: directory))
        try await withCachedLoopback(cache: first, handler: handler) { _, client in
            let stored = try await client.send(CachedText(path: "d", policy: .http, key: "damaged"))
            #expect(stored == "answer 1")
            await first.waitForPendingWrites()
        }
        let files = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasSuffix(".entry") }
        #expect(files.count == 1)
        let path = directory + "/" + (files.first ?? "")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(bytes.count - 3).write(to: URL(fileURLWithPath: path))
        let second = makeCache(clock: CacheTestClock(), storage: DiskCacheStorage(directory: directory))
        try await withCachedLoopback(cache: second, handler: handler) { server, client in
            let error = await #expect(throws: CurlewError.self) { try await client.send(CachedText(path: "d", policy: .cacheOnly(), key: "damaged")) }
            #expect(error?.code == .cacheMiss, "a truncated entry is a miss, never a short body")
            let answer = try await client.response(for: CachedText(path: "d", policy: .http, key: "damaged"))
            #expect(answer.value == "answer 2")
            #expect(answer.source == .network)
            #expect(server.requestCount == 1)
        }
    }
}

/// ``DiskCacheStorage`` as a user meets it: a newer answer too big to keep, and two clients on
/// one directory.
@Suite("Cache audit: disk storage", .timeLimit(.minutes(2)))
struct CacheAuditDiskTests {
    private func entry(_ key: String, body: Int) -> CacheEntry {
        CacheEntry(
            key: key, status: 200, headers: [.contentType: "text/plain"], body: Data(repeating: 0x61, count: body), url: "http://127.0.0.1/x",
            requestTime: Date(), storedAt: Date(), discardAfter: Date().addingTimeInterval(3_600))
    }

    @Test func aNewerEntryAboveTheBoundRemovesTheOlderOne() async throws {
        let directory = makeCacheDirectory("audit-bound")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = DiskCacheStorage(directory: directory, maximumBytes: 4_000)
        try await store.store(entry("k", body: 100))
        #expect(await store.entry(for: "k")?.body.count == 100)
        try await store.store(entry("k", body: 10_000))
        #expect(await store.entry(for: "k") == nil, "the key must not go on answering with the replaced bytes")
        #expect(await store.count == 0)
        #expect(await DiskCacheStorage(directory: directory, maximumBytes: 4_000).entry(for: "k") == nil)
    }

    @Test func aNewerAnswerTooBigToStoreLeavesNoOlderAnswerForCacheOnly() async throws {
        let directory = makeCacheDirectory("audit-bound-client")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let cache = ResponseCache(storage: DiskCacheStorage(directory: directory, maximumBytes: 4_000), credentials: .anonymous)
        let counter = HitCounter()
        try await withCachedLoopback(
            cache: cache,
            handler: { _ in
                let n = counter.next()
                return ServerResponse(status: 200, headers: [("Content-Type", "text/plain")], body: Array((n == 1 ? "small" : String(repeating: "b", count: 10_000)).utf8))
            }
        ) { server, client in
            let small = try await client.send(CachedText(path: "grow", policy: .writeOnly))
            let large = try await client.send(CachedText(path: "grow", policy: .writeOnly))
            #expect(small == "small")
            #expect(large.count == 10_000)
            await cache.waitForPendingWrites()
            let error = await #expect(throws: CurlewError.self) { try await client.send(CachedText(path: "grow", policy: .cacheOnly())) }
            #expect(error?.code == .cacheMiss, "not the `small` the server has since replaced")
            #expect(server.requestCount == 2)
        }
    }

    @Test func invalidationAndSweepsReachEntriesAnotherStoreWroteAfterOpening() async throws {
        let directory = makeCacheDirectory("audit-two")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let first = DiskCacheStorage(directory: directory)
        let second = DiskCacheStorage(directory: directory)
        try await first.store(entry("mine", body: 10))
        try await second.store(entry("theirs", body: 10))
        var expiring = entry("expiring", body: 10)
        expiring.discardAfter = Date().addingTimeInterval(-1)
        try await second.store(expiring)
        #expect(await first.removeExpired(before: Date()) == 1)
        #expect(await second.entry(for: "expiring") == nil)
        #expect(await first.removeEntries { $0 == "theirs" } == 1)
        #expect(await second.entry(for: "theirs") == nil, "removed from the directory both stores share")
        #expect(await first.entry(for: "theirs") == nil)
        try await second.store(entry("later", body: 10))
        #expect(await first.removeEntries { _ in true } == 2)
        #expect(await DiskCacheStorage(directory: directory).count == 0)
    }

    @Test func aClientInvalidatesWhatAnotherClientOnTheSameDirectoryStored() async throws {
        let directory = makeCacheDirectory("audit-two-clients")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let mine = ResponseCache(storage: DiskCacheStorage(directory: directory), credentials: .anonymous)
        let theirs = ResponseCache(storage: DiskCacheStorage(directory: directory), credentials: .anonymous)
        let counter = HitCounter()
        let handler: @Sendable (ServerRequest) async -> ServerResponse = { _ in
            ServerResponse(status: 200, headers: [("Content-Type", "text/plain")], body: Array("answer \(counter.next())".utf8))
        }
        try await withCachedLoopback(cache: mine, handler: handler) { _, client in
            _ = try await client.send(CachedText(path: "a", policy: .writeOnly, key: "shared-a"))
            await mine.waitForPendingWrites()
        }
        try await withCachedLoopback(cache: theirs, handler: handler) { _, client in
            _ = try await client.send(CachedText(path: "b", policy: .writeOnly, key: "shared-b"))
            await theirs.waitForPendingWrites()
        }
        #expect(await mine.invalidate(.request("shared-b")) == 1)
        try await withCachedLoopback(cache: mine, handler: handler) { server, client in
            let error = await #expect(throws: CurlewError.self) { try await client.send(CachedText(path: "b", policy: .cacheOnly(), key: "shared-b")) }
            #expect(error?.code == .cacheMiss)
            let kept = try await client.send(CachedText(path: "a", policy: .cacheOnly(), key: "shared-a"))
            #expect(kept == "answer 1")
            #expect(server.requestCount == 0)
        }
    }
}

/// A request with any method and no body, answered as text.
struct CachedWrite: Endpoint {
    typealias Response = String
    var method: HTTPRequest.Method
    var path: String
    var query: [URLQueryItem] = []
    var headers: [String: String] = [:]
    var policy: CachePolicy = .networkOnly

    var options: RequestOptions {
        var options = RequestOptions()
        options.cache = policy
        return options
    }
}

/// RFC 9111 §4.4: a successful unsafe request removes the stored answers of its URL (and of its
/// same-origin `Location` and `Content-Location`), whatever the unsafe call's own policy.
@Suite("Cache audit: unsafe methods invalidate", .timeLimit(.minutes(2)))
struct CacheAuditInvalidationTests {
    private func makeCache(storage: MemoryCacheStorage = MemoryCacheStorage()) -> ResponseCache {
        ResponseCache(configuration: .init(storage: storage, credentials: .anonymous))
    }

    /// GETs answer `<path> <n>` fresh for ten minutes (varying on `Accept-Language`); other
    /// methods answer `done`, with the status and headers the test asks for by path.
    private func server(_ counter: HitCounter) -> @Sendable (ServerRequest) async -> ServerResponse {
        { request in
            let n = counter.next()
            guard request.method == "GET" || request.method == "HEAD" else {
                switch request.path {
                case "/items": return ServerResponse(status: 201, headers: [("Location", "/items/7")], body: Array("done".utf8))
                case "/elsewhere": return ServerResponse(status: 200, headers: [("Location", "http://127.0.0.2:1/items/7")], body: Array("done".utf8))
                case "/moved": return ServerResponse(status: 200, headers: [("Content-Location", "items/7?b=2&a=1")], body: Array("done".utf8))
                case "/refused" where request.method == "PUT": return ServerResponse(status: 409, body: Array("conflict".utf8))
                case "/items/7/edit": return .redirect(to: "/items/7", status: 303)
                case "/a": return .redirect(to: "/b", status: 307)
                case "/items/8": return .redirect(to: "/items/8/missing", status: 303)
                default: return ServerResponse(status: 200, body: Array("done".utf8))
                }
            }
            if request.path.hasSuffix("/missing") { return ServerResponse(status: 404, body: Array("gone".utf8)) }
            return ServerResponse(
                status: 200, headers: [("Cache-Control", "max-age=600"), ("Vary", "Accept-Language"), ("Content-Type", "text/plain")],
                body: Array("\(request.uri) \(n)".utf8))
        }
    }

    /// The redirects an unsafe request was answered with name the URLs it changed too: a `303`'s
    /// `Location` (post, then redirect), a `307`'s target (the `PUT` went on there), and the
    /// request's own URL when a hop after the redirect fails.
    @Test func theURLsAnUnsafeRequestsRedirectsNameAreRemoved() async throws {
        let counter = HitCounter()
        try await withCachedLoopback(cache: makeCache(), handler: server(counter)) { server, client in
            let seven = CachedText(path: "items/7", policy: .http)
            let b = CachedText(path: "b", policy: .http)
            let eight = CachedText(path: "items/8", policy: .http)
            _ = try await client.send(seven)
            _ = try await client.send(b)
            _ = try await client.send(eight)
            #expect(try await client.response(for: seven).source == .cache)
            _ = try await client.send(CachedWrite(method: .post, path: "items/7/edit"))
            #expect(try await client.response(for: seven).source == .network, "303 Location: /items/7")
            _ = try await client.send(CachedWrite(method: .put, path: "a"))
            #expect(try await client.response(for: b).source == .network, "the PUT went on to /b")
            let error = await #expect(throws: CurlewError.self) { try await client.send(CachedWrite(method: .post, path: "items/8")) }
            #expect(error?.status?.code == 404)
            #expect(try await client.response(for: eight).source == .network, "the POST was answered with a redirect: it changed /items/8")
        }
    }

    @Test(arguments: [HTTPRequest.Method.put, .post, .delete, .patch, HTTPRequest.Method("PURGE")!])
    func aSuccessfulUnsafeRequestRemovesTheStoredAnswersOfItsURL(_ method: HTTPRequest.Method) async throws {
        let storage = MemoryCacheStorage()
        let counter = HitCounter()
        try await withCachedLoopback(cache: makeCache(storage: storage), handler: server(counter)) { server, client in
            let english = CachedText(path: "items/1", headers: ["Accept-Language": "en"], policy: .http)
            let french = CachedText(path: "items/1", headers: ["Accept-Language": "fr"], policy: .http)
            _ = try await client.send(english)
            _ = try await client.send(french)
            #expect(try await client.response(for: english).source == .cache)
            #expect(server.requestCount == 2)
            // The write endpoint declares no cache policy (the default, networkOnly).
            #expect(try await client.send(CachedWrite(method: method, path: "items/1")) == "done")
            let afterEnglish = try await client.response(for: english)
            let afterFrench = try await client.response(for: french)
            #expect(afterEnglish.source == .network, "the stored GET went with the \(method)")
            #expect(afterFrench.source == .network, "every variant")
            #expect(afterEnglish.value == "/items/1 4")
            #expect(server.requests.map(\.method) == ["GET", "GET", method.rawValue, "GET", "GET"])
        }
    }

    @Test func aSafeMethodOrAFailedUnsafeOneRemovesNothing() async throws {
        let counter = HitCounter()
        try await withCachedLoopback(cache: makeCache(), handler: server(counter)) { server, client in
            let item = CachedText(path: "refused", policy: .http)
            _ = try await client.send(item)
            _ = try await client.send(CachedWrite(method: .options, path: "refused"))
            #expect(try await client.response(for: item).source == .cache)
            let error = await #expect(throws: CurlewError.self) { try await client.send(CachedWrite(method: .put, path: "refused")) }
            #expect(error?.status?.code == 409)
            #expect(try await client.response(for: item).source == .cache, "an error answer changes nothing (RFC 9111 §4.4)")
            #expect(server.requestCount == 3)
        }
    }

    @Test func theSameOriginLocationAndContentLocationAreRemovedAndAnotherOriginsAreNot() async throws {
        let counter = HitCounter()
        try await withCachedLoopback(cache: makeCache(), handler: server(counter)) { server, client in
            let seven = CachedText(path: "items/7", policy: .http)
            let sorted = CachedText(path: "items/7", query: [URLQueryItem(name: "a", value: "1"), URLQueryItem(name: "b", value: "2")], policy: .http)
            _ = try await client.send(seven)
            _ = try await client.send(sorted)
            _ = try await client.send(CachedWrite(method: .post, path: "elsewhere"))
            #expect(try await client.response(for: seven).source == .cache, "a Location on another origin is not this cache's to drop")
            _ = try await client.send(CachedWrite(method: .post, path: "items"))
            #expect(try await client.response(for: seven).source == .network, "201 Location: /items/7")
            #expect(try await client.response(for: sorted).source == .cache)
            _ = try await client.send(CachedWrite(method: .put, path: "moved"))
            #expect(try await client.response(for: sorted).source == .network, "Content-Location: items/7?b=2&a=1, query order aside")
            #expect(server.requestCount == 7)
        }
    }

    @Test func aConditionalUnsafeRequestTheCacheLeavesAloneStillInvalidates() async throws {
        let counter = HitCounter()
        try await withCachedLoopback(cache: makeCache(), handler: server(counter)) { server, client in
            let item = CachedText(path: "items/2", policy: .http)
            _ = try await client.send(item)
            _ = try await client.send(CachedWrite(method: .put, path: "items/2", headers: ["If-Match": "\"v1\""], policy: .http))
            #expect(try await client.response(for: item).source == .network)
            #expect(server.requestCount == 3)
        }
    }

    @Test func theStoredHeadAnswerGoesTooAndAMockedWriteRemovesNothing() async throws {
        let counter = HitCounter()
        try await withCachedLoopback(cache: makeCache(), handler: server(counter)) { server, client in
            let head = CachedWrite(method: .head, path: "items/3", policy: .http)
            _ = try await client.send(head)
            #expect(try await client.response(for: head).source == .cache)
            _ = try await client.send(CachedWrite(method: .delete, path: "items/3")) { $0.mock = .stub(MockStub(.json("{}"))) }
            #expect(try await client.response(for: head).source == .cache, "a fabricated answer is no news from the server")
            _ = try await client.send(CachedWrite(method: .delete, path: "items/3"))
            #expect(try await client.response(for: head).source == .network)
            #expect(server.requests.map(\.method) == ["HEAD", "DELETE", "HEAD"])
        }
    }
}

/// The same rules against servers nobody here wrote: httpbin and nginx's static files.
@Suite("Cache audit: httpbin and nginx", .timeLimit(.minutes(2)))
struct CacheAuditRealServerTests {
    private func nginx() throws -> (url: String, root: String) {
        let environment = TestServers.environment
        let url = try #require(environment["CURLEW_NGINX_URL"], "CURLEW_NGINX_URL is not set: run scripts/test.sh")
        let root = try #require(environment["CURLEW_NGINX_ROOT"], "CURLEW_NGINX_ROOT is not set: run scripts/test.sh")
        return (url, root)
    }

    @Test func aPostToHttpbinRemovesTheStoredGetOfTheSameURL() async throws {
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
        let client = APIClient(configuration: ClientConfiguration(baseURL: try TestServers.httpbin(), middleware: [cache]))
        let query = [URLQueryItem(name: "Cache-Control", value: "max-age=600"), URLQueryItem(name: "X-Audit", value: UUID().uuidString)]
        let get = CachedText(path: "response-headers", query: query, policy: .http)
        #expect(try await client.response(for: get).source == .network)
        #expect(try await client.response(for: get).source == .cache)
        _ = try await client.send(CachedWrite(method: .post, path: "response-headers", query: query))
        #expect(try await client.response(for: get).source == .network, "RFC 9111 §4.4")
        #expect(await cache.statistics.stores == 2)
    }

    @Test func anNginxFileIsHeuristicallyFreshThenRevalidatedThenReplaced() async throws {
        let (url, root) = try nginx()
        let name = "cache-audit-\(UUID().uuidString).txt"
        let path = root + "/" + name
        defer { try? FileManager.default.removeItem(atPath: path) }
        let start = Date()
        try Data("version one".utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.modificationDate: start.addingTimeInterval(-1_000)], ofItemAtPath: path)
        let clock = CacheTestClock(start)
        let cache = ResponseCache(configuration: .init(storage: MemoryCacheStorage(), credentials: .anonymous, now: clock.function))
        let client = APIClient(configuration: ClientConfiguration(baseURL: url, middleware: [cache]))
        let file = CachedText(path: name, policy: .http)
        let first = try await client.response(for: file)
        #expect(first.source == .network)
        #expect(first.headers[.eTag] != nil)
        clock.advance(60)
        #expect(try await client.response(for: file).source == .cache, "10 % of 1,000 s since Last-Modified")
        clock.advance(60)
        let confirmed = try await client.response(for: file)
        #expect(confirmed.source == .revalidated, "nginx answered the stored validators with 304")
        #expect(confirmed.value == "version one")
        try Data("version two!".utf8).write(to: URL(fileURLWithPath: path))
        try FileManager.default.setAttributes([.modificationDate: start.addingTimeInterval(-500)], ofItemAtPath: path)
        clock.advance(200)
        let replaced = try await client.response(for: file)
        #expect(replaced.source == .network)
        #expect(replaced.value == "version two!")
        #expect(await cache.statistics.revalidations == 1)
        #expect(await cache.statistics.stores == 2)
    }
}

/// A `Location` names the stored answer it invalidates in whatever spelling the server chose:
/// it is written the way stored keys write URLs before it is looked up.
@Suite("Cache audit: the invalidated URL's spelling")
struct CacheInvalidationSpellingTests {
    @Test(
        arguments: [
            ("HTTPS://API.Example.com:443/items/7?x=1", "https://api.example.com/items/7?x=1"),
            ("/items/7", "https://api.example.com/items/7"),
            ("items/8", "https://api.example.com/items/8"),
            ("https://api.example.com:8443/items/7", nil),
            ("http://api.example.com/items/7", nil),
            ("https://cdn.example.com/items/7", nil),
        ] as [(String, String?)])
    func aSameOriginLocationIsWrittenAsAStoredKeyWritesItsURL(_ location: String, _ expected: String?) {
        #expect(ResponseCache.sameOrigin(location, as: "https://api.example.com/items") == expected)
    }
}
