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
