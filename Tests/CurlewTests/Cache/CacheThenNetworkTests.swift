@testable import Curlew
@testable import CurlewCore
import Foundation
import LoopbackServer
import Testing
import TestSupport

/// ``APIClient/cacheThenNetwork(_:options:)``: stored first, fresh second, the error last.
@Suite("Cache then network", .timeLimit(.minutes(2)))
struct CacheThenNetworkTests {
    @Test func yieldsTheStoredAnswerThenTheFreshOneInOrder() async throws {
        let clock = CacheTestClock()
        let cache = ResponseCache(configuration: .init(storage: MemoryCacheStorage(), credentials: .anonymous, now: clock.function))
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, handler: { _ in .text("page \(counter.next())") }) { server, client in
            var first: [String] = []
            for try await page in client.cacheThenNetwork(CachedText(path: "feed")) { first.append("\(page.source.name): \(page.value)") }
            #expect(first == ["network: page 1"], "nothing stored yet: only the network's answer")
            #expect(server.requestCount == 1)

            clock.advance(90)
            var second: [APIResponse<String>] = []
            for try await page in client.cacheThenNetwork(CachedText(path: "feed")) { second.append(page) }
            #expect(second.map(\.value) == ["page 1", "page 2"])
            #expect(second.map(\.source) == [.cache, .network])
            #expect(second[0].source.storedAt != nil)
            #expect((second[0].source.age ?? 0) >= 0)
            #expect(server.requestCount == 2, "the stored answer cost no request")

            let third = try await client.send(CachedText(path: "feed", policy: .cacheOnly()))
            #expect(third == "page 2", "the fresh answer was stored")
        }
    }

    @Test func endsWithTheFreshErrorAfterTheStoredValue() async throws {
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
        let failing = FlagBox()
        try await withCachedLoopback(
            cache: cache,
            handler: { _ in
                failing.isSet ? ServerResponse(status: 500, body: Array("oops".utf8)) : .text("page")
            }
        ) { _, client in
            _ = try await client.send(CachedText(path: "feed", policy: .writeOnly))
            failing.set()
            var values: [String] = []
            var failure: CurlewError?
            do {
                for try await page in client.cacheThenNetwork(CachedText(path: "feed")) { values.append(page.value) }
            } catch let error as CurlewError {
                failure = error
            }
            #expect(values == ["page"])
            #expect(failure?.code == .unacceptableStatus)
            #expect(failure?.status?.code == 500)
        }
    }

    @Test func theFreshRequestRevalidatesWithTheStoredETag() async throws {
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
        try await withCachedLoopback(
            cache: cache,
            handler: { request in
                received(request, "If-None-Match") == "\"e1\""
                    ? ServerResponse(status: 304, headers: [("ETag", "\"e1\"")])
                    : ServerResponse(status: 200, headers: [("ETag", "\"e1\"")], body: Array("page".utf8))
            }
        ) { server, client in
            _ = try await client.send(CachedText(path: "feed", policy: .writeOnly))
            var sources: [ResponseSource] = []
            for try await page in client.cacheThenNetwork(CachedText(path: "feed")) {
                #expect(page.value == "page")
                sources.append(page.source)
            }
            #expect(sources == [.cache, .revalidated])
            #expect(server.requestCount == 2)
        }
    }

    /// Issue 30, item 4: the network step asks the server whatever cache policy the endpoint
    /// declares (documented on ``APIClient/cacheThenNetwork(_:options:)``) — a fresh `.maxAge`
    /// entry, `.cacheOnly` and `.networkFirst` alike — with the stored validators, so each costs
    /// one conditional request and yields the stored answer, then the revalidated one.
    @Test(arguments: [CachePolicy.maxAge(.hours(1)), .cacheOnly(), .networkFirst(staleFor: .hours(1)), .http])
    func theNetworkStepRevalidatesWhateverTheEndpointsPolicy(policy: CachePolicy) async throws {
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
        let conditional = HitCounter()
        try await withCachedLoopback(
            cache: cache,
            handler: { request in
                guard received(request, "If-None-Match") == "\"e1\"" else {
                    return ServerResponse(status: 200, headers: [("ETag", "\"e1\""), ("Cache-Control", "max-age=3600")], body: Array("page".utf8))
                }
                _ = conditional.next()
                return ServerResponse(status: 304, headers: [("ETag", "\"e1\"")])
            }
        ) { server, client in
            _ = try await client.send(CachedText(path: "feed", policy: .writeOnly))
            var sources: [ResponseSource] = []
            for try await page in client.cacheThenNetwork(CachedText(path: "feed", policy: policy)) {
                #expect(page.value == "page")
                sources.append(page.source)
            }
            #expect(sources == [.cache, .revalidated])
            #expect(server.requestCount == 2, "the store, then one conditional request")
            #expect(conditional.next() == 2, "exactly one request carried the stored ETag")
        }
    }

    @Test func withoutACacheItFailsAtConfigurationAndSendsNothing() async throws {
        try await withLoopback(handler: { _ in .text("page") }) { server, client, _ in
            var sources: [ResponseSource] = []
            let error = await #expect(throws: CurlewError.self) {
                for try await page in client.cacheThenNetwork(CachedText(path: "feed")) { sources.append(page.source) }
            }
            #expect(error?.code == .cacheNotConfigured)
            #expect(error?.stage == .configuration)
            #expect(sources.isEmpty)
            #expect(server.requestCount == 0)
        }
    }
}
