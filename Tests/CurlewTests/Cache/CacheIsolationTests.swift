@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

/// Keys: per-credential isolation, logout purge, volatile parameters and signatures, versions.
@Suite("Cache keys and credential isolation", .timeLimit(.minutes(2)))
struct CacheIsolationTests {
    /// `/me` answers with whoever the Authorization header names (`Bearer token-A` is `user A`;
    /// the body never repeats a token, so the files can be searched for tokens).
    private static let whoAmI: @Sendable (ServerRequest) async -> ServerResponse = { request in
        .text("me=" + (received(request, "Authorization")?.replacingOccurrences(of: "Bearer token-", with: "user ") ?? "anonymous"))
    }

    @Test func userBNeverGetsUserAsAnswerAndLogoutPurgesAsEntries() async throws {
        let directory = makeCacheDirectory("accounts")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let store = TokenStore(credential: .init(accessToken: "token-A", refreshToken: "refresh-A"))
        let cache = ResponseCache(storage: DiskCacheStorage(directory: directory), credentials: .tokenStore(store))
        let me = CachedText(path: "me", policy: .maxAge(.hours(8)))
        try await withCachedLoopback(cache: cache, middleware: [AuthorizationMiddleware(store: store)], handler: Self.whoAmI) { server, client in
            #expect(try await client.send(me) == "me=user A")
            #expect(try await client.send(me) == "me=user A")
            #expect(server.requestCount == 1)

            await store.update(.init(accessToken: "token-B", refreshToken: "refresh-B"))
            #expect(try await client.send(me) == "me=user B", "B is never served A's /me")
            #expect(server.requestCount == 2)

            await store.clear()
            #expect(try await client.send(me) == "me=anonymous", "nobody logged in is never served A's or B's /me")
            #expect(server.requestCount == 3)
            let mustLogIn = await #expect(throws: CurlewError.self) {
                try await client.send(CachedText(path: "me", policy: .maxAge(.hours(8)), requiresLogin: true))
            }
            #expect(mustLogIn?.code == .notLoggedIn)

            await store.update(.init(accessToken: "token-A2", refreshToken: "refresh-A"))
            #expect(try await client.send(me) == "me=user A", "A's answers survive a new access token for the same account")
            #expect(server.requestCount == 3)

            // Nothing on disk names a token: keys hold digests of the account. Writes happen off
            // the caller's path: wait for them, so no temporary file is renamed while listed.
            await cache.waitForPendingWrites()
            for name in try FileManager.default.contentsOfDirectory(atPath: directory) {
                let bytes = try Data(contentsOf: URL(fileURLWithPath: directory + "/" + name))
                for secret in ["token-A", "token-B", "refresh-A", "refresh-B"] {
                    #expect(bytes.range(of: Data(secret.utf8)) == nil, "\(name) contains \(secret)")
                }
            }

            // Logout: purge A's entries before clearing the store.
            #expect(await cache.invalidateCurrentAccount() == 1)
            #expect(try await client.send(me) == "me=user A2")
            #expect(server.requestCount == 4)
        }
    }

    @Test func anAuthorizationHeaderSetByTheEndpointScopesTheEntry() async throws {
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
        try await withCachedLoopback(cache: cache, handler: Self.whoAmI) { server, client in
            let alice = CachedText(path: "me", headers: ["Authorization": "Basic alice"], policy: .maxAge(.hours(1)))
            let bob = CachedText(path: "me", headers: ["Authorization": "Basic bob"], policy: .maxAge(.hours(1)))
            let answer = try await client.send(alice)
            #expect(answer == "me=Basic alice")
            #expect(try await client.send(bob) == "me=Basic bob")
            #expect(try await client.send(alice) == "me=Basic alice")
            #expect(try await client.send(CachedText(path: "me", policy: .maxAge(.hours(1)))) == "me=anonymous")
            #expect(server.requestCount == 3)
        }
    }

    @Test func theSessionEndingPurgesTheAccountsEntries() async throws {
        let storage = MemoryCacheStorage()
        let store = TokenStore(credential: .init(accessToken: "t", refreshToken: "r"))
        let cache = ResponseCache(storage: storage, credentials: .tokenStore(store))
        let refresh = TokenRefreshMiddleware(store: store, sessionEndedStatuses: [403]) { $0 }
        try await withCachedLoopback(
            cache: cache, middleware: [refresh, AuthorizationMiddleware(store: store)],
            handler: { request in
                request.path == "/end" ? ServerResponse(status: 403) : .text("profile")
            }
        ) { _, client in
            _ = try await client.send(CachedText(path: "profile", policy: .writeOnly))
            await cache.waitForPendingWrites()
            #expect(await storage.count == 1)
            let ended = await #expect(throws: CurlewError.self) { try await client.send(CachedText(path: "end", policy: .writeOnly)) }
            #expect(ended?.code == .sessionEnded)
            #expect(await storage.count == 0)
        }
    }

    /// A token refresh is not an account change: the answer to the call that refreshed (its
    /// first attempt answered 401, the retry with the new access token 200) is stored for the
    /// same account and answers the next call.
    @Test func anAnswerFetchedAcrossATokenRefreshIsStored() async throws {
        let store = TokenStore(credential: .init(accessToken: "t1", refreshToken: "r"))
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .tokenStore(store))
        let refresh = TokenRefreshMiddleware(store: store) { old in .init(accessToken: "t2", refreshToken: old.refreshToken) }
        try await withCachedLoopback(
            cache: cache, middleware: [refresh, AuthorizationMiddleware(store: store)],
            handler: { request in
                guard received(request, "Authorization") == "Bearer t2" else { return ServerResponse(status: 401) }
                return ServerResponse(headers: [("Cache-Control", "private, max-age=600")], body: Array("me".utf8))
            }
        ) { server, client in
            let first = try await client.send(CachedText(path: "me", policy: .http, requiresLogin: true))
            #expect(first == "me")
            await cache.waitForPendingWrites()
            #expect(await cache.statistics.stores == 1)
            let again = try await client.response(for: CachedText(path: "me", policy: .http, requiresLogin: true))
            #expect(again.source == .cache)
            #expect(server.requestCount == 2, "401, then 200; the second call is answered from the cache")
        }
    }

    /// An answer with `Vary: Cookie` to a client whose cookies come from a `CookieJar` (added by
    /// libcurl, below the cache) is not stored: the cache cannot tell one session's answer from
    /// another's. After the jar changes session, `/me` is asked again.
    @Test func anAnswerVaryingOnJarCookiesIsNotStored() async throws {
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
        let handler: @Sendable (ServerRequest) async -> ServerResponse = { request in
            if let user = request.queryItems.first(where: { $0.name == "u" })?.value {
                return ServerResponse(headers: [("Set-Cookie", "sid=\(user); Path=/")], body: Array("hello".utf8))
            }
            return ServerResponse(
                headers: [("Cache-Control", "private, max-age=600"), ("Vary", "Cookie")], body: Array((received(request, "Cookie") ?? "none").utf8))
        }
        try await withLoopback(handler: handler) { server, _, transport in
            let jar = CookieJar()
            var options = TransferOptions()
            options.connection.cookies = jar
            let client = APIClient(
                configuration: ClientConfiguration(baseURL: server.baseURL, transferOptions: options, middleware: [cache]), transport: transport)
            _ = try await client.send(CachedText(path: "login", query: [.init(name: "u", value: "A")]))
            let first = try await client.send(CachedText(path: "me", policy: .http))
            #expect(first == "sid=A")
            try jar.removeAll()
            _ = try await client.send(CachedText(path: "login", query: [.init(name: "u", value: "B")]))
            #expect(try await client.send(CachedText(path: "me", policy: .http)) == "sid=B")
            #expect(await cache.statistics.stores == 0)
        }
    }

    @Test func signedRequestsASecondApartHitTheSameEntry() async throws {
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
        let seconds = HitCounter()
        let signing = SigningMiddleware(
            secret: "s3cret", algorithm: .hmacSHA256, timestampParameter: "ts", nonceParameter: "nonce",
            now: { Date(timeIntervalSince1970: 1_700_000_000 + Double(seconds.next())) })
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, middleware: [signing], handler: { _ in .text("answer \(counter.next())") }) { server, client in
            let request = CachedText(path: "search", query: [URLQueryItem(name: "q", value: "x")], policy: .maxAge(.hours(1)))
            #expect(try await client.send(request) == "answer 1")
            #expect(try await client.send(request) == "answer 1")
            #expect(server.requestCount == 1)
            let sent = try #require(server.requests.first)
            #expect(sent.queryItems.map(\.name).sorted() == ["nonce", "q", "sign", "ts"], "the signature was sent, outside the key")
        }
    }

    @Test func volatileParametersDeclaredByTheRequestOrTheCacheAreLeftOutOfTheKey() async throws {
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous, volatileParameters: ["time"])
        let counter = HitCounter()
        try await withCachedLoopback(cache: cache, handler: { _ in .text("answer \(counter.next())") }) { server, client in
            func nearby(lat: String, time: String, page: String = "1") -> CachedText {
                CachedText(
                    path: "nearby", query: [.init(name: "page", value: page), .init(name: "lat", value: lat), .init(name: "time", value: time)],
                    policy: .maxAge(.hours(1)), volatile: ["lat"])
            }
            let answer = try await client.send(nearby(lat: "1.0", time: "100"))
            #expect(answer == "answer 1")
            #expect(try await client.send(nearby(lat: "2.0", time: "200")) == "answer 1")
            #expect(try await client.send(nearby(lat: "2.0", time: "200", page: "2")) == "answer 2")
            #expect(server.requestCount == 2)
        }
    }

    /// Parameters are sorted by name for the key, but a repeated name's values keep their order:
    /// `?sort=price&sort=name` and `?sort=name&sort=price` are two lists, two entries; the same
    /// parameters in another order of names are one.
    @Test func aRepeatedParametersValuesKeepTheirOrderInTheKey() async throws {
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
        try await withCachedLoopback(cache: cache, handler: { request in .text(request.query ?? "") }) { server, client in
            func list(_ items: [(String, String)]) -> CachedText {
                CachedText(path: "list", query: items.map { URLQueryItem(name: $0.0, value: $0.1) }, policy: .maxAge(.hours(1)))
            }
            let first = try await client.send(list([("sort", "price"), ("sort", "name")]))
            #expect(first == "sort=price&sort=name")
            #expect(try await client.send(list([("sort", "name"), ("sort", "price")])) == "sort=name&sort=price")
            #expect(try await client.send(list([("page", "2"), ("sort", "name"), ("sort", "price")])) == "page=2&sort=name&sort=price")
            #expect(try await client.send(list([("sort", "name"), ("page", "2"), ("sort", "price")])) == "page=2&sort=name&sort=price")
            #expect(server.requestCount == 3)
        }
    }

    @Test func aCustomKeyAndANewCacheVersion() async throws {
        let storage = MemoryCacheStorage()
        let counter = HitCounter()
        let version1 = ResponseCache(storage: storage, credentials: .anonymous, version: "1")
        let version2 = ResponseCache(storage: storage, credentials: .anonymous, version: "2")
        try await withCachedLoopback(cache: version1, handler: { _ in .text("answer \(counter.next())") }) { server, client in
            _ = try await client.send(CachedText(path: "a", policy: .writeOnly)) { $0.cacheKey = "search/sunset" }
            #expect(try await client.send(CachedText(path: "b", policy: .cacheOnly())) { $0.cacheKey = "search/sunset" } == "answer 1")
            let other = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [version2]))
            let miss = await #expect(throws: CurlewError.self) {
                try await other.send(CachedText(path: "b", policy: .cacheOnly())) { $0.cacheKey = "search/sunset" }
            }
            #expect(miss?.code == .cacheMiss)
            #expect(server.requestCount == 1)
        }
    }

    /// HAccess's `[super cacheKey] + part` and Monkey's `cacheSensitiveData`: a suffix adds to the
    /// default key instead of replacing it, and reaches the storage only as a digest.
    @Test func aKeySuffixKeepsTheDefaultKeyAndStoresOnlyADigest() async throws {
        let storage = MemoryCacheStorage()
        let counter = HitCounter()
        let cache = ResponseCache(storage: storage, credentials: .anonymous)
        try await withCachedLoopback(cache: cache, handler: { _ in .text("answer \(counter.next())") }) { server, client in
            let feed = CachedText(path: "feed", policy: .maxAge(.hours(1)))
            #expect(try await client.send(feed) { $0.cacheKeySuffix = "user-4711" } == "answer 1")
            #expect(try await client.send(feed) { $0.cacheKeySuffix = "user-4711" } == "answer 1")
            #expect(try await client.send(feed) { $0.cacheKeySuffix = "user-42" } == "answer 2")
            // The same URL under another path is another key: the default request part stays.
            #expect(try await client.send(CachedText(path: "other", policy: .maxAge(.hours(1)))) { $0.cacheKeySuffix = "user-4711" } == "answer 3")
            #expect(server.requestCount == 3)
            await cache.waitForPendingWrites()
            let keys = await storage.keys
            #expect(keys.count == 3)
            #expect(keys.allSatisfy { !$0.contains("4711") && !$0.contains("user-42") })
            #expect(keys.filter { $0.contains("GET \(server.baseURL)/feed +") }.count == 2)
            // Invalidating with the same suffix removes that entry only.
            let removed = try await client.invalidateCache(for: feed) { $0.cacheKeySuffix = "user-42" }
            #expect(removed == 1)
            #expect(await storage.count == 2)
        }
    }

    /// Monkey's per-request `cacheVersion`: bumping one endpoint's version misses only its answers.
    @Test func anEndpointsOwnVersionMissesOnlyItsAnswers() async throws {
        let storage = MemoryCacheStorage()
        let counter = HitCounter()
        let cache = ResponseCache(storage: storage, credentials: .anonymous)
        try await withCachedLoopback(cache: cache, handler: { request in .text("\(request.path) \(counter.next())") }) { server, client in
            let feed = CachedText(path: "feed", policy: .maxAge(.hours(1)))
            let profile = CachedText(path: "profile", policy: .maxAge(.hours(1)))
            let first = try await client.send(feed) { $0.cacheVersion = "1" }
            #expect(first == "/feed 1")
            #expect(try await client.send(profile) == "/profile 2")
            #expect(try await client.send(feed) { $0.cacheVersion = "1" } == "/feed 1")
            #expect(try await client.send(feed) { $0.cacheVersion = "2" } == "/feed 3")
            #expect(try await client.send(profile) == "/profile 2")
            #expect(server.requestCount == 3)
            await cache.waitForPendingWrites()
            #expect(await storage.keys.filter { $0.hasPrefix("1/2|") }.count == 1)
        }
    }
}
