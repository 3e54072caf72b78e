@testable import Curlew
@testable import CurlewCore
import Foundation
import LoopbackServer
import Testing
import TestSupport

/// A cache policy on a client without a ``ResponseCache`` is a configuration error: nothing is
/// sent, so `.cacheOnly` can never turn into a network request.
@Suite("Cache policies without a cache", .timeLimit(.minutes(2)))
struct CacheConfigurationTests {
    @Test(arguments: [
        CachePolicy.cacheOnly(), .cacheOnly(maxAge: .hours(1)), .maxAge(.hours(8)), .http, .writeOnly, .alwaysRevalidate,
        .networkFirst(staleFor: .hours(1)),
    ])
    func anyCachePolicyWithoutACacheFailsBeforeSending(_ policy: CachePolicy) async throws {
        try await withLoopback(handler: { _ in .text("page") }) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.send(CachedText(path: "feed", policy: policy)) }
            #expect(error?.code == .cacheNotConfigured)
            #expect(error?.stage == .configuration)
            #expect(error?.level == .invalidRequest)
            #expect(error?.request?.method == .get)
            #expect(server.requestCount == 0)
        }
    }

    @Test func networkOnlyWithoutACacheIsAnOrdinaryRequest() async throws {
        try await withLoopback(handler: { _ in .text("page") }) { server, client, _ in
            let page = try await client.send(CachedText(path: "feed", policy: .networkOnly))
            #expect(page == "page")
            #expect(server.requestCount == 1)
        }
    }

    @Test func skippingTheCacheForOneCallWithACachePolicyIsTheSameError() async throws {
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
        try await withCachedLoopback(cache: cache, handler: { _ in .text("page") }) { server, client in
            let error = await #expect(throws: CurlewError.self) {
                try await client.send(CachedText(path: "feed", policy: .cacheOnly())) { $0.skippedMiddleware.insert(.cache) }
            }
            #expect(error?.code == .cacheNotConfigured)
            #expect(error?.message.hasSuffix("for this call") == true)
            #expect(server.requestCount == 0)
            let page = try await client.send(CachedText(path: "feed", policy: .writeOnly))
            #expect(page == "page", "with the cache the same call works")
            #expect(server.requestCount == 1)
        }
    }

    @Test func aCacheAddedForOneCallSatisfiesTheCheck() async throws {
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
        try await withLoopback(handler: { _ in .text("page") }) { server, client, _ in
            #expect(try await client.send(CachedText(path: "feed", policy: .writeOnly)) { $0.middleware.append(cache) } == "page")
            let stored = try await client.response(for: CachedText(path: "feed", policy: .cacheOnly())) { $0.middleware.append(cache) }
            #expect(stored.source == .cache)
            #expect(server.requestCount == 1)
        }
    }
}

/// A lookup that may not contact the server stays a lookup also when the cache cannot answer the
/// request at all: one that carries its own validators or range, or one that needs a login
/// nobody has.
@Suite("Cache-only lookups the cache cannot answer", .timeLimit(.minutes(2)))
struct UnanswerableCacheOnlyTests {
    @Test(arguments: [
        ("If-None-Match", "\"x\""), ("If-Modified-Since", "Sun, 06 Nov 1994 08:49:37 GMT"), ("Range", "bytes=0-9"),
        ("If-Match", "\"x\""), ("If-Unmodified-Since", "Sun, 06 Nov 1994 08:49:37 GMT"),
    ])
    func aRequestWithItsOwnValidatorsOrRangeFailsWithCacheMissUnsent(_ name: String, _ value: String) async throws {
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
        try await withCachedLoopback(cache: cache, handler: { _ in .text("page") }) { server, client in
            let cacheOnly = await #expect(throws: CurlewError.self) {
                try await client.send(CachedText(path: "feed", headers: [name: value], policy: .cacheOnly()))
            }
            #expect(cacheOnly?.code == .cacheMiss)
            let onlyIfCached = await #expect(throws: CurlewError.self) {
                try await client.send(CachedText(path: "feed", headers: [name: value, "Cache-Control": "only-if-cached"], policy: .http))
            }
            #expect(onlyIfCached?.code == .cacheMiss)
            #expect(server.requestCount == 0)
            // Any other policy sends it as it is.
            let sent = try await client.send(CachedText(path: "feed", headers: [name: value], policy: .http))
            #expect(sent == "page")
            #expect(server.requestCount == 1)
        }
    }

    @Test func aCallNeedingALoginNobodyHasFailsWithCacheMissUnsent() async throws {
        let store = TokenStore()
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .tokenStore(store))
        try await withCachedLoopback(cache: cache, middleware: [AuthorizationMiddleware(store: store)], handler: { _ in .text("page") }) { server, client in
            let error = await #expect(throws: CurlewError.self) {
                try await client.send(CachedText(path: "me", policy: .cacheOnly(), requiresLogin: true))
            }
            #expect(error?.code == .cacheMiss)
            #expect(server.requestCount == 0)
        }
    }
}
