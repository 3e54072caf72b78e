@testable import Curlew
@testable import CurlewCore
import CurlewTesting
import Foundation
import HTTPTypes
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// Each ``CachePolicy`` against the loopback server, which counts the requests that reach it: a
/// policy that says "cache" must not let the request happen.
@Suite("Cache policies against a counting server", .timeLimit(.minutes(2)))
struct CachePolicyTests {
    /// A cache over memory with a movable clock.
    private func makeCache(clock: CacheTestClock, storage: any CacheStorage = MemoryCacheStorage(), credentials: CacheCredentials = .anonymous) -> ResponseCache {
        ResponseCache(configuration: .init(storage: storage, credentials: credentials, now: clock.function))
    }

    /// Answers `answer <n>` with the given headers.
    private func counting(_ counter: HitCounter, headers: [(name: String, value: String)] = []) -> @Sendable (ServerRequest) async -> ServerResponse {
        { _ in ServerResponse(status: 200, headers: headers + [("Content-Type", "text/plain")], body: Array("answer \(counter.next())".utf8)) }
    }

    @Test func networkOnlyIsTheDefaultAndNeverTouchesTheCache() async throws {
        let clock = CacheTestClock()
        let cache = makeCache(clock: clock)
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, handler: counting(counter, headers: [("Cache-Control", "max-age=600")])) { server, client in
            let answer = try await client.send(CachedText(path: "a"))
            #expect(answer == "answer 1")
            #expect(try await client.send(CachedText(path: "a")) == "answer 2")
            #expect(server.requestCount == 2)
            #expect(await cache.statistics == CacheStatistics())
        }
    }

    @Test func aMockedAnswerIsNeverStored() async throws {
        let clock = CacheTestClock()
        let cache = makeCache(clock: clock)
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, handler: counting(counter)) { server, client in
            let mocked = try await client.send(CachedText(path: "a", policy: .writeOnly)) { $0.mock = .stub(MockStub(.json("{}"))) }
            #expect(mocked == "{}")
            #expect(server.requestCount == 0)
            #expect(await cache.statistics.stores == 0, "fabricated bytes never reach the cache")
            let real = try await client.send(CachedText(path: "a", policy: .writeOnly))
            #expect(real == "answer 1")
            #expect(await cache.statistics.stores == 1)
        }
    }

    /// A mocked `304` answers its call from the stored answer but does not refresh it: the
    /// fabricated lifetime (a year) never reaches later real calls.
    @Test func aMocked304DoesNotRefreshTheStoredAnswer() async throws {
        let clock = CacheTestClock()
        let cache = makeCache(clock: clock)
        let counter = HitCounter()
        let handler: @Sendable (ServerRequest) async -> ServerResponse = { _ in
            ServerResponse(headers: [("Cache-Control", "max-age=60"), ("ETag", "\"v1\"")], body: Array("answer \(counter.next())".utf8))
        }
        try await withCachedLoopback(cache: cache, handler: handler) { server, client in
            let first = try await client.send(CachedText(path: "a", policy: .http))
            #expect(first == "answer 1")
            clock.advance(120)
            let year = MockAnswer(status: .notModified, headers: [.eTag: "\"v1\"", .cacheControl: "max-age=31536000"])
            #expect(try await client.send(CachedText(path: "a", policy: .http)) { $0.mock = .stub(MockStub(year)) } == "answer 1")
            #expect(server.requestCount == 1)
            // Still stale: the next real call asks the server.
            #expect(try await client.send(CachedText(path: "a", policy: .http)) == "answer 2")
            #expect(server.requestCount == 2)
        }
    }

    @Test func writeOnlyFetchesEveryTimeAndStoresForCacheOnly() async throws {
        let clock = CacheTestClock()
        let cache = makeCache(clock: clock)
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, handler: counting(counter)) { server, client in
            #expect(try await client.send(CachedText(path: "a", policy: .writeOnly)) == "answer 1")
            #expect(try await client.send(CachedText(path: "a", policy: .writeOnly)) == "answer 2")
            #expect(server.requestCount == 2)
            let stored = try await client.response(for: CachedText(path: "a", policy: .cacheOnly()))
            #expect(stored.value == "answer 2")
            #expect(stored.source == .cache)
            #expect(stored.metrics == nil)
            #expect(server.requestCount == 2)
            #expect(await cache.statistics.stores == 2)
            #expect(await cache.statistics.hits == 1)
        }
    }

    @Test func theEightHourRuleFromTheEndpointTypeServesWithoutARequest() async throws {
        let clock = CacheTestClock()
        let cache = makeCache(clock: clock)
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, handler: counting(counter)) { server, client in
            let log = EventLog(client)
            defer { log.stop() }
            let first = try await client.response(for: EightHourFeed())
            #expect(first.value == "answer 1")
            #expect(first.source == .network)
            clock.advance(8 * 3_600 - 1)
            let second = try await client.response(for: EightHourFeed())
            #expect(second.value == "answer 1")
            #expect(second.source == .cache)
            #expect(second.source.storedAt == first.source.storedAt ?? second.source.storedAt)
            #expect(server.requestCount == 1)
            clock.advance(2)
            #expect(try await client.send(EightHourFeed()) == "answer 2")
            #expect(server.requestCount == 2)
            #expect(await eventually { log.kinds(cacheEventKinds).count == 5 })
            #expect(log.kinds(cacheEventKinds) == [.cacheMiss, .cacheStored, .cacheHit, .cacheMiss, .cacheStored])
        }
    }

    @Test func aCallSiteOverridesTheEndpointTypesPolicy() async throws {
        let cache = makeCache(clock: CacheTestClock())
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, handler: counting(counter)) { server, client in
            _ = try await client.send(EightHourFeed())
            #expect(try await client.send(EightHourFeed()) { $0.cache = .networkOnly } == "answer 2")
            #expect(try await client.send(EightHourFeed()) == "answer 1", "networkOnly neither read nor wrote")
            #expect(server.requestCount == 2)
        }
    }

    @Test func noCacheFromTheServerBeatsTheAppLifetimeUnlessTheAppOverridesIt() async throws {
        let cache = makeCache(clock: CacheTestClock())
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, handler: counting(counter, headers: [("Cache-Control", "no-cache")])) { server, client in
            _ = try await client.send(CachedText(path: "n", policy: .maxAge(.hours(8))))
            #expect(try await client.send(CachedText(path: "n", policy: .maxAge(.hours(8)))) == "answer 2")
            #expect(server.requestCount == 2)
            let overridden = try await client.response(for: CachedText(path: "n", policy: .maxAge(.hours(8), overridingServer: true)))
            #expect(overridden.value == "answer 2")
            #expect(overridden.source == .cache)
            #expect(server.requestCount == 2)
        }
    }

    @Test func aServerMaxAgeShortensTheAppLifetime() async throws {
        let clock = CacheTestClock()
        let cache = makeCache(clock: clock)
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, handler: counting(counter, headers: [("Cache-Control", "max-age=60")])) { server, client in
            _ = try await client.send(CachedText(path: "m", policy: .maxAge(.hours(8))))
            clock.advance(59)
            #expect(try await client.send(CachedText(path: "m", policy: .maxAge(.hours(8)))) == "answer 1")
            clock.advance(2)
            #expect(try await client.send(CachedText(path: "m", policy: .maxAge(.hours(8)))) == "answer 2")
            #expect(server.requestCount == 2)
        }
    }

    @Test func cacheOnlyNeverTouchesTheNetworkAndMissesWithATypedError() async throws {
        let clock = CacheTestClock()
        let cache = makeCache(clock: clock)
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, handler: counting(counter)) { server, client in
            let error = await #expect(throws: CurlewError.self) { try await client.send(CachedText(path: "c", policy: .cacheOnly())) }
            #expect(error?.code == .cacheMiss)
            #expect(error?.stage == .middleware(.cache))
            #expect(server.requestCount == 0)
            _ = try await client.send(CachedText(path: "c", policy: .writeOnly))
            clock.advance(100)
            #expect(try await client.send(CachedText(path: "c", policy: .cacheOnly())) == "answer 1")
            let old = await #expect(throws: CurlewError.self) { try await client.send(CachedText(path: "c", policy: .cacheOnly(maxAge: .seconds(50)))) }
            #expect(old?.code == .cacheMiss)
            #expect(server.requestCount == 1)
        }
    }

    @Test func networkFirstFallsBackOnlyOnConnectFailuresAndWithinItsBound() async throws {
        let clock = CacheTestClock()
        let cache = makeCache(clock: clock)
        let counter = HitCounter()
        let failing = FlagBox()
        let server = try await LoopbackServer.start { _ in
            failing.isSet
                ? ServerResponse(status: 500, body: Array("down".utf8))
                : ServerResponse(status: 200, body: Array("answer \(counter.next())".utf8))
        }
        let transport = CurlTransport()
        let base = server.baseURL
        let client = APIClient(configuration: ClientConfiguration(baseURL: base, middleware: [cache]), transport: transport)
        let request = CachedText(path: "nf", policy: .networkFirst(staleFor: .hours(1)), key: "nf")
        #expect(try await client.send(request) == "answer 1")
        #expect(try await client.send(request) == "answer 2", "network first asks the server while it answers")
        failing.set()
        let serverError = await #expect(throws: CurlewError.self) { try await client.send(request) }
        #expect(serverError?.code == .unacceptableStatus, "a 500 is the server's answer, not a reason to serve stale")
        await server.shutdown()
        // The server is gone: the same entry (same custom key) read through an address that
        // refuses every connection.
        let offlineClient = APIClient(configuration: ClientConfiguration(baseURL: refusingBaseURL, middleware: [cache]), transport: transport)
        let offline = try await offlineClient.response(for: request)
        #expect(offline.value == "answer 2")
        #expect(offline.source == .cache)
        #expect(transport.statistics.connectRetries == 0, "the stored answer comes after one refused connection, not after the connect retries")
        clock.advance(3_601)
        let tooOld = await #expect(throws: CurlewError.self) { try await offlineClient.send(request) }
        #expect(tooOld?.code == .cannotConnect)
        // Nothing to fall back on: the call went out again with the transport's retries, one
        // attempt then ten (``ConnectRetryPolicy/standard``), nine of them retries.
        #expect(transport.statistics.connectRetries == ConnectRetryPolicy.standard.maximumAttempts - 1)
        #expect(tooOld?.message.contains("after \(ConnectRetryPolicy.standard.maximumAttempts) connection attempts") == true)
        await transport.shutdown()
    }

    @Test func onlyAcceptedEnvelopeSuccessfulAnswersAreStored() async throws {
        let cache = makeCache(clock: CacheTestClock())
        let mode = FlagBox()
        try await withCachedLoopback(
            cache: cache,
            handler: { request in
                if request.path == "/status" { return ServerResponse(status: 503, body: Array("busy".utf8)) }
                return .json(mode.isSet ? #"{"code":"0","data":"ok"}"# : #"{"code":"17","msg":"no"}"#)
            }
        ) { server, client in
            await #expect(throws: CurlewError.self) { try await client.send(EnvelopedText(policy: .writeOnly)) }
            await #expect(throws: CurlewError.self) { try await client.send(CachedText(path: "status", policy: .writeOnly)) }
            #expect(await cache.statistics.stores == 0)
            let miss = await #expect(throws: CurlewError.self) { try await client.send(EnvelopedText(policy: .cacheOnly())) }
            #expect(miss?.code == .cacheMiss)
            mode.set()
            #expect(try await client.send(EnvelopedText(policy: .writeOnly)) == "ok")
            let stored = try await client.response(for: EnvelopedText(policy: .cacheOnly()))
            #expect(stored.value == "ok", "the stored bytes went through the envelope and decoding again")
            #expect(stored.businessCode == "0")
            #expect(server.requestCount == 3)
        }
    }

    @Test func noStoreIsNeverWritten() async throws {
        let storage = MemoryCacheStorage()
        let cache = makeCache(clock: CacheTestClock(), storage: storage)
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, handler: counting(counter, headers: [("Cache-Control", "no-store")])) { server, client in
            _ = try await client.send(CachedText(path: "s", policy: .maxAge(.hours(8), overridingServer: true)))
            #expect(try await client.send(CachedText(path: "s", policy: .maxAge(.hours(8), overridingServer: true))) == "answer 2")
            #expect(server.requestCount == 2)
            #expect(await storage.count == 0)
        }
    }

    @Test func aDateInTheFutureCannotExtendTheLifetime() async throws {
        let clock = CacheTestClock()
        let cache = makeCache(clock: clock)
        let counter = HitCounter()
        let tomorrow = httpDate(Date().addingTimeInterval(86_400))
        try await withCachedLoopback(cache: cache, handler: counting(counter, headers: [("Cache-Control", "max-age=60"), ("Date", tomorrow)])) { server, client in
            _ = try await client.send(CachedText(path: "d", policy: .http))
            clock.advance(30)
            #expect(try await client.send(CachedText(path: "d", policy: .http)) == "answer 1")
            clock.advance(31)
            #expect(try await client.send(CachedText(path: "d", policy: .http)) == "answer 2")
            #expect(server.requestCount == 2)
        }
    }

    /// `50, 55`: two caches on the way each appended an `Age`; the list's first member counts
    /// (RFC 9111 §5.1). It was dropped, and the stale answer served as fresh for its max-age.
    @Test(arguments: ["50", "50, 55"])
    func ageFromAnUpstreamCacheCountsAgainstMaxAge(_ age: String) async throws {
        let clock = CacheTestClock()
        let cache = makeCache(clock: clock)
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, handler: counting(counter, headers: [("Cache-Control", "max-age=60"), ("Age", age)])) { server, client in
            _ = try await client.send(CachedText(path: "age", policy: .http))
            clock.advance(9)
            #expect(try await client.send(CachedText(path: "age", policy: .http)) == "answer 1")
            clock.advance(2)
            #expect(try await client.send(CachedText(path: "age", policy: .http)) == "answer 2")
            #expect(server.requestCount == 2)
        }
    }

    @Test func validatorsAreSentAndA304ServesTheStoredBytes() async throws {
        let cache = makeCache(clock: CacheTestClock())
        let counter = HitCounter()
        try await withCachedLoopback(
            cache: cache,
            handler: { request in
                let n = counter.next()
                if received(request, "If-None-Match") == "\"v1\"" {
                    return ServerResponse(status: 304, headers: [("ETag", "\"v1\""), ("Cache-Control", "no-cache"), ("X-Seen", "\(n)")])
                }
                return ServerResponse(status: 200, headers: [("ETag", "\"v1\""), ("Cache-Control", "no-cache"), ("X-Seen", "\(n)")], body: Array("body one".utf8))
            }
        ) { server, client in
            let log = EventLog(client)
            defer { log.stop() }
            _ = try await client.send(CachedText(path: "v", policy: .http))
            let again = try await client.response(for: CachedText(path: "v", policy: .http))
            #expect(again.value == "body one")
            #expect(again.source == .revalidated)
            #expect(again.headers[HTTPField.Name("X-Seen")!] == "2", "the 304's headers refresh the entry")
            #expect(server.requests.count == 2)
            #expect(received(server.requests[1], "If-None-Match") == "\"v1\"")
            #expect(received(server.requests[0], "If-None-Match") == nil)
            #expect(await cache.statistics.revalidations == 1)
            #expect(await eventually { log.kinds(cacheEventKinds) == [.cacheMiss, .cacheStored, .cacheMiss, .cacheRevalidated] })
        }
    }

    @Test func varyKeepsOneVariantPerLanguageAndVaryStarIsNeverServed() async throws {
        let cache = makeCache(clock: CacheTestClock())
        let counter = HitCounter()
        try await withCachedLoopback(
            cache: cache,
            handler: { request in
                _ = counter.next()
                let language = received(request, "Accept-Language") ?? "none"
                let vary = request.path == "/star" ? "*" : "Accept-Language"
                return ServerResponse(status: 200, headers: [("Vary", vary), ("Cache-Control", "max-age=600")], body: Array(language.utf8))
            }
        ) { server, client in
            let english = CachedText(path: "v", headers: ["Accept-Language": "en"], policy: .http)
            let french = CachedText(path: "v", headers: ["Accept-Language": "fr"], policy: .http)
            #expect(try await client.send(english) == "en")
            #expect(try await client.send(french) == "fr")
            #expect(try await client.send(english) == "en")
            #expect(try await client.send(french) == "fr")
            #expect(try await client.send(CachedText(path: "v", policy: .http)) == "none")
            #expect(server.requestCount == 3)
            let star = CachedText(path: "star", headers: ["Accept-Language": "en"], policy: .maxAge(.hours(1), overridingServer: true))
            _ = try await client.send(star)
            _ = try await client.send(star)
            #expect(server.requestCount == 5)
        }
    }

    @Test func privateAnswersStayOutOfASharedCache() async throws {
        let storage = MemoryCacheStorage()
        let cache = ResponseCache(configuration: .init(storage: storage, credentials: .anonymous, isShared: true))
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, handler: counting(counter, headers: [("Cache-Control", "private, max-age=600")])) { server, client in
            _ = try await client.send(CachedText(path: "p", policy: .http))
            _ = try await client.send(CachedText(path: "p", policy: .http))
            #expect(server.requestCount == 2)
            #expect(await storage.count == 0)
        }
    }

    @Test func aFailedWriteIsQuietAndTheRequestSucceeds() async throws {
        let blocker = makeCacheDirectory("blocker")
        #expect(FileManager.default.createFile(atPath: blocker, contents: Data("a file, not a directory".utf8)))
        defer { try? FileManager.default.removeItem(atPath: blocker) }
        let cache = makeCache(clock: CacheTestClock(), storage: DiskCacheStorage(directory: blocker + "/cache"))
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, handler: counting(counter)) { server, client in
            let answer = try await client.send(CachedText(path: "w", policy: .writeOnly))
            #expect(answer == "answer 1")
            await cache.waitForPendingWrites()
            #expect(await cache.statistics.writeFailures == 1)
            #expect(await cache.statistics.stores == 1, "accepted for storing; the storage refused it afterwards")
            let error = await #expect(throws: CurlewError.self) { try await client.send(CachedText(path: "w", policy: .cacheOnly())) }
            #expect(error?.code == .cacheMiss, "a failed write leaves nothing behind, not even in the pending writes")
        }
    }

    @Test func invalidationByRequestPrefixAndEverything() async throws {
        let storage = MemoryCacheStorage()
        let cache = makeCache(clock: CacheTestClock(), storage: storage)
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, handler: counting(counter)) { server, client in
            for path in ["users/1", "users/2", "items/1"] { _ = try await client.send(CachedText(path: path, policy: .writeOnly)) }
            await cache.waitForPendingWrites()
            #expect(await storage.count == 3)
            #expect(try await client.invalidateCache(for: CachedText(path: "users/1")) == 1)
            #expect(await cache.invalidate(.keyPrefix("GET \(server.baseURL)/users/")) == 1)
            #expect(await storage.count == 1)
            #expect(try await client.send(CachedText(path: "items/1", policy: .cacheOnly())) == "answer 3")
            #expect(await cache.invalidate(.all) == 1)
            #expect(await storage.count == 0)
        }
    }
}

/// A flag a handler reads and a test sets.
final class FlagBox: Sendable {
    /// The flag, guarded by the mutex.
    private let flag = Mutex(false)
    var isSet: Bool { flag.withLock { $0 } }
    func set() { flag.withLock { $0 = true } }
}

/// A JSON `{code, msg, data}` envelope whose `data` is text.
struct EnvelopedText: Endpoint {
    typealias Response = String
    var policy: CachePolicy
    var path: String { "env" }
    var envelope: ResponseEnvelope? { .codeMsgData }
    var options: RequestOptions {
        var options = RequestOptions()
        options.cache = policy
        return options
    }

    func decode(_ response: RawResponse, decoder: JSONDecoder) throws -> String {
        try decoder.decode(String.self, from: response.body)
    }
}
