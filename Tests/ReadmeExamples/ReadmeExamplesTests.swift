import Curlew
import CurlewTesting
import Foundation
import HTTPTypes
import LoopbackServer
import Testing

/// Runs the README's examples (README.swift, generated from README.md) against mock transports
/// and checks what they sent and got.
@Suite("README examples")
struct ReadmeExamplesTests {
    /// Answers like the gallery API the README talks to.
    static func galleryTransport() -> MockTransport {
        MockTransport { request in
            let path = request.url.split(separator: "?").first.map(String.init) ?? request.url
            if request.method == .post, path.hasSuffix("/pictures") { return .text("", status: .created, for: request) }
            if path.hasSuffix("/login") { return .json(#"{"token":"t"}"#, for: request) }
            if path.hasSuffix("/profile") { return .text("ines", for: request) }
            if path.hasSuffix("/pictures/2") { return .text("", status: .notFound, for: request) }
            if path.hasSuffix("/pictures/search") { return .json(#"{"total":1,"pictures":[{"id":1,"title":"a"}]}"#, for: request) }
            if path.contains("/pictures/") {
                return .json(#"{"code":0,"msg":"here it is","data":{"id":5,"title":"Dunes"}}"#, for: request)
            }
            if path.contains("/albums/") { return .json(#"{"resp":{"data":[{"type":"pic","picUrl":"a.jpg"},{"type":"video","videoUrl":"b.mp4"}]}}"#, for: request) }
            if path.hasSuffix("/legacy/search") { return .json(#"{"resp":{"code":7,"msg":"busy"}}"#, for: request) }
            if path.hasSuffix("/me") { return .json(#"{"name":"ines"}"#, for: request) }
            return .json(#"{"total":1,"pictures":[{"id":1,"title":"a"}]}"#, for: request)
        }
    }

    @Test func theShortExampleSendsWhatItSays() async throws {
        let transport = Self.galleryTransport()
        try await tour(APIClient(baseURL: "https://api.test", transport: transport))
        #expect(
            transport.requests.map(\.url) == [
                "https://api.test/pictures/search?key=sunset",
                "https://api.test/pictures/search?key=fog",
                "https://api.test/pictures",
            ])
        #expect(transport.requests.last?.body == Data(#"{"title":"Dunes"}"#.utf8))
        #expect(transport.requests.last?.headers[.init("X-Client")!] == "gallery-sync")
    }

    @Test func optionsEnvelopeAndDecodingExamples() async throws {
        let transport = Self.galleryTransport()
        let store = TokenStore(credential: .init(accessToken: "a"))
        let client = APIClient(
            configuration: ClientConfiguration(baseURL: "https://api.test", middleware: [AuthorizationMiddleware(store: store)]),
            transport: transport)
        let profile = try await refreshProfile(client)
        #expect(profile.name?.stringValue == "ines")
        #expect(transport.contexts.last?.options.queue == "profile")
        #expect(transport.contexts.last?.options.totalTimeout == .seconds(5))
        #expect(transport.requests.last?.headers[.authorization] == "Bearer a")

        try await showPicture(client)
        let envelope = try await client.send(PictureEnvelopeRequest(id: 5))
        #expect(envelope.msg?.stringValue == "here it is")
        #expect(try await searchMedia(client) == 2)
        #expect(transport.requests.last?.url == "https://api.test/albums/7/search?limit=10&q=sunset")
        let legacy = await #expect(throws: CurlewError.self) { try await client.send(LegacySearchRequest()) }
        #expect(legacy?.businessCode == "7")
    }

    @Test func theGalleryClientIsBuiltInPhaseOrder() async throws {
        let transport = Self.galleryTransport()
        let client = makeGalleryClient(saved: SavedTokens(access: "a", refresh: "r"), secret: "123456", transport: transport)
        #expect(client.configuration.middleware.map(\.kind) == [.retry, .tokenRefresh, .authorization, .commonArguments, .serverClock, .signing])
        _ = try await client.send(SearchRequest(key: "fog"))
        let sent = try #require(transport.requests.first)
        #expect(sent.headers[.authorization] == "Bearer a")
        #expect(sent.url.contains("v=2.1") && sent.url.contains("ts=") && sent.url.contains("sign="))
    }

    @Test func middlewareExamples() async throws {
        let transport = Self.galleryTransport()
        let client = APIClient(
            configuration: ClientConfiguration(baseURL: "https://api.test", middleware: [RequestIDHeader()]),
            transport: transport)
        _ = try await client.send(SearchRequest(key: "x"))
        #expect(transport.requests.first?.headers[.init("X-Request-ID")!]?.hasSuffix("-1") == true)

        let canned = APIClient(
            configuration: ClientConfiguration(baseURL: "https://api.test", middleware: [CannedAnswer(body: #"{"code":0,"msg":"","data":{"id":9,"title":"canned"}}"#)]),
            transport: transport)
        let picture = try await canned.response(for: PictureRequest(id: 9))
        #expect(picture.value.title == "canned")
        #expect(picture.source == .mock)
        #expect(transport.requests.count == 1, "the canned answer never reached the transport")
    }

    @Test func cancellationAndTrackerExamples() async throws {
        let transport = Self.galleryTransport()
        let client = APIClient(baseURL: "https://api.test", transport: transport)
        let cancelled = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            return await loadOrGiveUp(client)
        }
        #expect(await cancelled.value.isEmpty)
        #expect(transport.requests.isEmpty, "a call in a cancelled task sends nothing")
        await fetchAllPages(client)
        #expect(transport.requests.count == 5)
    }

    @Test func theConcurrencyTourRuns() async throws {
        let transport = Self.galleryTransport()
        try await concurrencyTour(transport: transport)
        // image, 3 pictures, search + picture, login + profile
        #expect(transport.requests.count == 8)
        #expect(transport.requests.filter { $0.url.hasSuffix("/pictures/2") }.count == 1)
    }

    /// The migration guide's client and tour, run: every seed's shape answered by a mock
    /// transport, and what reached it checked request by request.
    @Test func theMigrationTourRuns() async throws {
        let album = #"{"resp":{"data":{"items":[{"type":"pic","picUrl":"a.jpg"}],"slots":{"cover":{"type":"video","videoUrl":"b.mp4"}},"count":"3","layout":"grid","tags":["sea"]}}}"#
        let transport = MockTransport { request in
            let path = request.url.split(separator: "?").first.map(String.init) ?? request.url
            if path.hasSuffix("/albums") { return .json(album, for: request) }
            if path.hasSuffix("/notices") { return .json(#"{"c":200,"n":"welcome","p":{"unread":2},"h":{"server":"x"}}"#, for: request) }
            if path.hasSuffix("/save") { return .json(#"{"status":true,"data":{}}"#, for: request) }
            return .text("", status: .notFound, for: request)
        }
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-port-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let holds = RequestHolds()
        let client = makePortClient(
            store: TokenStore(credential: .init(accessToken: "a", refreshToken: "r")), cacheDirectory: folder.path,
            refreshURL: "https://api.example.com/v1/refresh", holds: holds, transport: transport)
        try await portTour(client, holds: holds)

        let sent = transport.requests
        let paths = sent.map { $0.url.split(separator: "?").first.map(String.init) ?? $0.url }
        // album 7; the search is the endpoint's stub; three notices (the last via the CDN); the
        // save; the batch's two albums; the chain's two albums (the second asks for album 3).
        #expect(paths.count == 9)
        #expect(paths.filter { $0 == "https://api.example.com/v1/albums" }.count == 5)
        #expect(paths.filter { $0 == "https://api.example.com/v1/notices" }.count == 2)
        #expect(paths.filter { $0 == "https://cdn.example.com/v1/notices" }.count == 1)
        #expect(paths.filter { $0 == "https://api.example.com/v1/save" }.count == 1)
        let first = try #require(sent.first)
        #expect(first.url.contains("id=7") && first.url.contains("lang=en") && first.url.contains("accessToken=a"))
        #expect(first.url.contains("v=2.1") && first.url.contains("platform=linux") && first.url.contains("ts=") && first.url.contains("sign="))
        #expect(first.headers[.init("X-Note")!] == "hi")
        #expect(sent.last?.url.contains("id=3") == true, "the chain's second album is the first's count")
        let notice = try #require(sent.first { $0.url.contains("/notices") })
        #expect(!notice.url.contains("accessToken"), "the token goes only to login-required requests")
        let save = try #require(sent.first { $0.url.hasSuffix("/save") || $0.url.contains("/save?") })
        #expect(save.method == .post)
        let body = try JSONSerialization.jsonObject(with: try #require(save.body)) as? [String: Any]
        #expect(body?["title"] as? String == "Fog" && body?["page"] as? Int == 2)
        #expect(body?["v"] as? String == "2.1", "the common arguments go beside the JSON parameters")
        #expect(save.url.contains("sign="), "the signature over the JSON members goes into the query")
    }

    /// The migration guide's cache rows, run: Monkey's MKCacheRequest, ignoreCache,
    /// isDataFromCache and HttpManager's localCacheToUrl against the loopback server (a mock's
    /// answer is never stored).
    @Test func theMigrationCacheRowsRun() async throws {
        let server = try await LoopbackServer.start(handler: { _ in .json(#"{"data":{"user":{"friends":["ana","ben"]}}}"#) })
        let transport = CurlTransport()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-port-cache-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let client = makePortCachedClient(baseURL: server.baseURL + "/v1", cacheDirectory: folder.path, transport: transport)
        let sources: [ResponseSource]
        do {
            sources = try await portCaches(client)
        } catch {
            await transport.shutdown()
            await server.shutdown()
            throw error
        }
        await transport.shutdown()
        await server.shutdown()
        #expect(sources == [.network, .network, .cache])
        #expect(server.requests.map(\.uri) == ["/v1/friends", "/v1/friends"])
    }

    @Test func theTestingExamplesRun() async throws {
        try await testSearch()
        try await testAgainstALocalServer()
    }
}
