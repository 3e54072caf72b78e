import Curlew
import CurlewDecoding
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

protocol SeedMedia: Sendable { var url: String { get } }
struct SeedPicture: SeedMedia, Decodable { var url: String; var width: Int }
struct SeedVideo: SeedMedia, Decodable { var url: String; var seconds: Int }

enum SeedMediaFamily: PolymorphicFamily {
    typealias Member = any SeedMedia
    static var members: [String: any Decodable.Type] { ["pic": SeedPicture.self, "video": SeedVideo.self] }
}

struct SeedAlbum: Decodable, Sendable {
    @PolymorphicDictionary<SeedMediaFamily> var slots: [String: any SeedMedia]
}

struct SeedAlbumRequest: Endpoint {
    typealias Response = SeedAlbum
    var path: String { "album" }
}

struct SeedChosenBase: Endpoint {
    typealias Response = String
    var path: String { "asset" }
}

/// Records what its failure hook saw.
struct SeedObserved: Endpoint {
    typealias Response = SeedItem
    var path: String
    let failures: SeedLog<CurlewError.Code>
    let received: SeedTally
    var envelope: ResponseEnvelope? { .cnp }
    func didReceive(_ response: RawResponse) throws { received.increment() }
    func didFail(_ error: CurlewError) { failures.append(error.code) }
}

@Suite("Seeds: requests")
struct SeedRequestTests {
    @Test func aCallChoosesMainSecondaryOrCDNOnTopOfFailover() async throws {
        let secondary = try await LoopbackServer.start(handler: { _ in .text("secondary") })
        let cdn = try await LoopbackServer.start(handler: { _ in .text("cdn") })
        do {
            try await withLoopback(handler: { _ in .text("main") }) { server, _, transport in
                let dead = "http://127.0.0.1:1/v1"
                let store = TokenStore(credential: .init(accessToken: "T1"))
                let client = APIClient(
                    configuration: ClientConfiguration(
                        baseURL: dead,
                        middleware: [
                            FailoverMiddleware(baseURLs: [dead, server.baseURL + "/v1"]),
                            AuthorizationMiddleware(store: store),
                        ],
                        trustedOrigins: [secondary.baseURL, cdn.baseURL]), transport: transport)
                let value1 = try await client.send(SeedChosenBase())
                #expect(value1 == "main", "main fails over to its mirror")
                let value2 = try await client.send(SeedChosenBase()) { $0.baseURL = cdn.baseURL + "/v1" }
                #expect(value2 == "cdn")
                let value3 = try await client.send(SeedChosenBase()) { $0.baseURL = secondary.baseURL + "/v1" }
                #expect(value3 == "secondary")
                #expect(server.requests.map(\.uri) == ["/v1/asset"])
                #expect(server.requests.first?.header("Authorization") == "Bearer T1")
                #expect(cdn.requests.map(\.uri) == ["/v1/asset"])
                #expect(cdn.requests.first?.header("Authorization") == "Bearer T1", "a configured CDN is the user's own origin")
                #expect(secondary.requests.count == 1)

                // A base URL that is not http(s) fails before anything is sent.
                let error = await #expect(throws: CurlewError.self) { try await client.send(SeedChosenBase()) { $0.baseURL = "ftp://cdn.example/v1" } }
                #expect(error?.code == .unsupportedScheme)
                #expect(error?.stage == .prepare)
                #expect(server.requests.count == 1)
                #expect(cdn.requests.count == 1)
            }
        } catch {
            await secondary.shutdown()
            await cdn.shutdown()
            throw error
        }
        await secondary.shutdown()
        await cdn.shutdown()
    }

    @Test func baseURLsAmongTheTrustedOriginsGetCredentialsAndALoginCallNeverGoesOutWithoutThem() async throws {
        let secondary = try await LoopbackServer.start(handler: { _ in .text("secondary") })
        let cdn = try await LoopbackServer.start(handler: { _ in .text("cdn") })
        let rewritten = try await LoopbackServer.start(handler: { _ in .text("rewritten") })
        do {
            try await withLoopback(handler: { _ in .text("main") }) { server, _, transport in
                let main = server.baseURL + "/v1"
                let store = TokenStore(credential: .init(accessToken: "T1"))
                let shared: [any APIMiddleware] = [
                    AuthorizationMiddleware(store: store),
                    CommonArgumentsMiddleware(parameters: ["app": "curlew"]),
                    SigningMiddleware(secret: "s3cret"),
                ]
                let client = APIClient(
                    configuration: ClientConfiguration(baseURL: main, middleware: shared, trustedOrigins: [secondary.baseURL, cdn.baseURL]),
                    transport: transport)
                for (base, expected) in [(secondary.baseURL + "/v1", "secondary"), (cdn.baseURL + "/v1", "cdn")] {
                    let answer = try await client.send(SeedChosenBase()) {
                        $0.baseURL = base
                        $0.requiresAuthentication = true
                    }
                    #expect(answer == expected)
                }
                for seen in [secondary, cdn] {
                    #expect(seen.requests.count == 1)
                    #expect(seen.requests.first?.header("Authorization") == "Bearer T1")
                    #expect(seen.requests.first?.queryItems.first { $0.name == "app" }?.value == "curlew")
                    #expect(seen.requests.first?.queryItems.contains { $0.name == "sign" } == true)
                }

                // A CDN the user says is not theirs gets nothing, and a login call never goes there.
                let thirdParty = APIClient(configuration: ClientConfiguration(baseURL: main, middleware: shared), transport: transport)
                let image = try await thirdParty.send(SeedChosenBase()) { $0.baseURL = cdn.baseURL + "/v1" }
                #expect(image == "cdn")
                #expect(cdn.requests.count == 2)
                #expect(cdn.requests.last?.header("Authorization") == nil)
                #expect(cdn.requests.last?.queryItems.isEmpty == true)
                let refused = await #expect(throws: CurlewError.self) {
                    try await thirdParty.send(SeedChosenBase()) {
                        $0.baseURL = cdn.baseURL + "/v1"
                        $0.requiresAuthentication = true
                    }
                }
                #expect(refused?.code == .notLoggedIn)
                #expect(cdn.requests.count == 2, "nothing went out")

                // A rewrite's declared targets are trusted; an undeclared one is not.
                let target = rewritten.baseURL
                let trustedRewrite = APIClient(
                    configuration: ClientConfiguration(
                        baseURL: main,
                        middleware: [
                            URLRewriteMiddleware(trusting: [target]) { $0.replacingOccurrences(of: server.baseURL, with: target) }
                        ] + shared), transport: transport)
                let moved = try await trustedRewrite.send(SeedChosenBase()) { $0.requiresAuthentication = true }
                #expect(moved == "rewritten")
                #expect(rewritten.requests.count == 1)
                #expect(rewritten.requests.first?.header("Authorization") == "Bearer T1")
                #expect(rewritten.requests.first?.queryItems.first { $0.name == "app" }?.value == "curlew")
                let plainRewrite = APIClient(
                    configuration: ClientConfiguration(
                        baseURL: main,
                        middleware: [
                            URLRewriteMiddleware { $0.replacingOccurrences(of: server.baseURL, with: target) }
                        ] + shared), transport: transport)
                let unauthenticated = await #expect(throws: CurlewError.self) {
                    try await plainRewrite.send(SeedChosenBase()) { $0.requiresAuthentication = true }
                }
                #expect(unauthenticated?.code == .notLoggedIn)
                #expect(rewritten.requests.count == 1, "nothing went out")
                #expect(server.requests.isEmpty)
            }
        } catch {
            await secondary.shutdown()
            await cdn.shutdown()
            await rewritten.shutdown()
            throw error
        }
        await secondary.shutdown()
        await cdn.shutdown()
        await rewritten.shutdown()
    }

    @Test func aDictionarysValueTypesComeFromTheDiscriminator() async throws {
        let body = #"{"slots": {"cover": {"type": "pic", "url": "c.jpg", "width": 450}, "intro": {"type": "video", "url": "i.mp4", "seconds": 9}}}"#
        try await withLoopback(handler: { _ in .json(body) }) { _, client, _ in
            let album = try await client.send(SeedAlbumRequest())
            #expect(album.slots.keys.sorted() == ["cover", "intro"])
            #expect((album.slots["cover"] as? SeedPicture)?.width == 450)
            #expect((album.slots["intro"] as? SeedVideo)?.seconds == 9)
        }
        let wrong = #"{"slots": {"cover": {"type": "gif", "url": "c.gif"}}}"#
        try await withLoopback(handler: { _ in .json(wrong) }) { _, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.send(SeedAlbumRequest()) }
            #expect(error?.code == .decodingFailed)
            #expect(error?.dataPath == "slots.cover.type")
        }
    }

    @Test func theFailureHookSeesEveryKindOfFailureButCancellation() async throws {
        try await withLoopback(handler: { (request: ServerRequest) async -> ServerResponse in
            switch request.path {
            case "/ok": return .json(#"{"c": 200, "n": "", "p": {"id": 1}}"#)
            case "/business": return .json(#"{"c": 500, "n": "broken", "p": null}"#)
            case "/slow":
                await request.connection.closed()
                return .text("")
            default: return .text("missing", status: 404)
            }
        }) { server, client, _ in
            let failures = SeedLog<CurlewError.Code>()
            let received = SeedTally()
            _ = try await client.send(SeedObserved(path: "ok", failures: failures, received: received))
            _ = try? await client.send(SeedObserved(path: "business", failures: failures, received: received))
            _ = try? await client.send(SeedObserved(path: "nothing", failures: failures, received: received))
            _ = try? await client.send(SeedObserved(path: "bad path\r\n", failures: failures, received: received))
            let slow = Task { try await client.send(SeedObserved(path: "slow", failures: failures, received: received)) }
            #expect(await eventually { server.inFlight(path: "/slow") == 1 })
            slow.cancel()
            await #expect(throws: CancellationError.self) { try await slow.value }
            #expect(failures.all == [.serverError, .unacceptableStatus, .invalidPath])
            #expect(received.count == 1, "didReceive only for the accepted response")
        }
    }
}
