@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import Synchronization
import LoopbackServer
import Testing
import TestSupport

/// The cache sits above the redirect step, so the answer it stores for a URL may have come from
/// another one. It stands for the original URL only as long as the redirects that led to it may
/// themselves be remembered: a permanent one (301, 308) that HTTP lets a cache store.
@Suite("Cache: answers reached through a redirect", .timeLimit(.minutes(2)))
struct CacheRedirectTests {
    /// `/start` redirects with `status` and `cacheControl`; `/final` answers `answer <n>`, fresh
    /// for a minute.
    private func redirecting(_ counter: HitCounter, status: Int, cacheControl: String) -> @Sendable (ServerRequest) async -> ServerResponse {
        { request in
            if request.path == "/start" {
                var redirect = ServerResponse.redirect(to: "/final", status: status)
                if !cacheControl.isEmpty { redirect.headers.append(("Cache-Control", cacheControl)) }
                return redirect
            }
            return ServerResponse(
                headers: [("Cache-Control", "max-age=60"), ("Content-Type", "text/plain")], body: Array("answer \(counter.next())".utf8))
        }
    }

    @Test(arguments: [
        (301, "", CachePolicy.http, true), (308, "", .http, true), (301, "max-age=600", .http, true),
        (302, "", .http, false), (307, "", .http, false), (303, "", .http, false),
        (301, "no-store", .http, false), (308, "no-store", .maxAge(.hours(1)), false),
        (302, "", .maxAge(.hours(1)), true), (301, "max-age=0", .http, false), (308, "max-age=30", .http, false),
        (301, "max-age=60", .http, true), (308, "max-age=30", .maxAge(.hours(1)), true),
    ])
    func theFinalAnswerStandsForTheOriginalURLOnlyWhenTheRedirectMayBeRemembered(
        _ status: Int, cacheControl: String, policy: CachePolicy, stored: Bool
    ) async throws {
        let cache = ResponseCache(configuration: .init(storage: MemoryCacheStorage(), credentials: .anonymous))
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, handler: redirecting(counter, status: status, cacheControl: cacheControl)) { server, client in
            #expect(try await client.send(CachedText(path: "start", policy: policy)) == "answer 1")
            #expect(await cache.statistics.stores == (stored ? 1 : 0))
            let again = try await client.response(for: CachedText(path: "start", policy: policy))
            #expect(again.source == (stored ? .cache : .network))
            #expect(again.value == (stored ? "answer 1" : "answer 2"))
            #expect(server.requests.filter { $0.path == "/start" }.count == (stored ? 1 : 2))
        }
    }

    /// A middleware between the cache and the redirect step that answers with a response of its
    /// own making (the body rewritten, the headers copied) does not hide the redirect from the
    /// cache: an answer reached through a `302` is still not stored for `/start`.
    @Test func aMiddlewareThatRebuildsTheResponseDoesNotHideTheRedirectFromTheCache() async throws {
        struct Rebuilding: APIMiddleware {
            var phase: MiddlewarePhase? { MiddlewarePhase(rank: 300, name: "rebuilding") }
            func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
                let raw = try await next(request, context)
                return RawResponse(status: raw.status, headers: raw.headers, body: raw.body + Data(" (seen)".utf8), url: raw.url)
            }
        }
        let cache = ResponseCache(configuration: .init(storage: MemoryCacheStorage(), credentials: .anonymous))
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, middleware: [Rebuilding()], handler: redirecting(counter, status: 302, cacheControl: "")) { server, client in
            #expect(try await client.send(CachedText(path: "start", policy: .http)) == "answer 1 (seen)")
            #expect(await cache.statistics.stores == 0)
            let again = try await client.response(for: CachedText(path: "start", policy: .http))
            #expect(again.source == .network)
            #expect(again.value == "answer 2 (seen)")
            #expect(server.requests.filter { $0.path == "/start" }.count == 2)
        }
    }

    /// The redirects the cache weighs are those of the attempt that answered: a first attempt
    /// sent through a `302` to a `503` and retried, whose retry `/start` answers itself, is stored.
    @Test func theRedirectsThatCountAreTheAnsweringAttempts() async throws {
        let cache = ResponseCache(configuration: .init(storage: MemoryCacheStorage(), credentials: .anonymous))
        let starts = HitCounter()
        let handler: @Sendable (ServerRequest) async -> ServerResponse = { request in
            if request.path == "/start", starts.next() == 1 { return .redirect(to: "/busy", status: 302) }
            if request.path == "/busy" { return .text("busy", status: 503) }
            return ServerResponse(headers: [("Cache-Control", "max-age=60"), ("Content-Type", "text/plain")], body: Array("direct".utf8))
        }
        let retry = RetryMiddleware(maximumAttempts: 2, baseDelay: .milliseconds(1), maximumDelay: .milliseconds(1))
        try await withCachedLoopback(cache: cache, middleware: [retry], handler: handler) { server, client in
            #expect(try await client.send(CachedText(path: "start", policy: .http)) == "direct")
            #expect(await cache.statistics.stores == 1)
            #expect(server.requests.map(\.path) == ["/start", "/busy", "/start"])
            let again = try await client.response(for: CachedText(path: "start", policy: .http))
            #expect(again.source == .cache)
        }
    }

    /// A stored answer revalidated through a redirect that now forbids storing is answered once
    /// more from the `304`, but no longer kept: the next call asks the server.
    @Test func aRevalidationThroughARedirectThatNowForbidsStoringRemovesTheEntry() async throws {
        let clock = CacheTestClock()
        let cache = ResponseCache(configuration: .init(storage: MemoryCacheStorage(), credentials: .anonymous, now: clock.function))
        let redirect = Mutex("")
        let handler: @Sendable (ServerRequest) async -> ServerResponse = { request in
            if request.path == "/start" {
                var answer = ServerResponse.redirect(to: "/final", status: 301)
                let control = redirect.withLock { $0 }
                if !control.isEmpty { answer.headers.append(("Cache-Control", control)) }
                return answer
            }
            if request.header("If-None-Match") == "\"v1\"" { return ServerResponse(status: 304, headers: [("ETag", "\"v1\"")]) }
            return ServerResponse(
                headers: [("Cache-Control", "max-age=60"), ("ETag", "\"v1\""), ("Content-Type", "text/plain")], body: Array("stored".utf8))
        }
        try await withCachedLoopback(cache: cache, handler: handler) { server, client in
            #expect(try await client.send(CachedText(path: "start", policy: .http)) == "stored")
            #expect(await cache.statistics.stores == 1)
            redirect.withLock { $0 = "no-store" }
            clock.advance(120)
            let revalidated = try await client.response(for: CachedText(path: "start", policy: .http))
            #expect(revalidated.value == "stored")
            #expect(server.requests.last?.header("If-None-Match") == "\"v1\"")
            let third = try await client.response(for: CachedText(path: "start", policy: .http))
            #expect(third.source == .network, "the entry is gone: the server is asked")
            #expect(server.requests.filter { $0.path == "/start" }.count == 3)
        }
    }
}
