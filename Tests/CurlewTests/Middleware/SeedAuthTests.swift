import Curlew
import Foundation
import HTTPTypes
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// Saves every change, starts from a given credential.
final class RecordingCredentialStorage: CredentialStorage {
    /// Guarded by its own lock.
    let saved = Mutex<[TokenStore.Credential?]>([])
    let initial: TokenStore.Credential?

    init(initial: TokenStore.Credential?) { self.initial = initial }

    func loadCredential() -> TokenStore.Credential? { initial }
    func saveCredential(_ credential: TokenStore.Credential?) { saved.withLock { $0.append(credential) } }
    var history: [String?] { saved.withLock { $0.map { $0?.accessToken } } }
}

struct SeedPublicGet: Endpoint {
    typealias Response = String
    var path: String { "public" }
}

struct SeedLoginGet: Endpoint {
    typealias Response = String
    var path: String { "me" }
    var options: RequestOptions { RequestOptions(requiresAuthentication: true) }
}

struct SeedLoginFormPost: Endpoint {
    typealias Response = String
    @Field var title: String
    var method: HTTPRequest.Method { .post }
    var path: String { "notes" }
    var options: RequestOptions { RequestOptions(requiresAuthentication: true) }
}

struct SeedLoginJSONPost: Endpoint {
    typealias Response = String
    @Field var title: String
    var method: HTTPRequest.Method { .post }
    var path: String { "notes" }
    var parameterEncoding: ParameterEncoding { .json }
    var options: RequestOptions { RequestOptions(requiresAuthentication: true) }
}

@Suite("Seeds: auth")
struct SeedAuthTests {
    func client(_ server: LoopbackServer, _ transport: CurlTransport, _ middleware: [any APIMiddleware]) -> APIClient {
        APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: middleware), transport: transport)
    }

    @Test func tokenTravelsAsAQueryFormOrJSONParameterOnlyOnLoginRequests() async throws {
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            let store = TokenStore(credential: .init(accessToken: "T1"))
            let auth = AuthorizationMiddleware(store: store, tokenParameter: "accessToken", placement: .alongsideParameters, attachesOnlyWhenLoginRequired: true)
            let client = client(server, transport, [auth])
            _ = try await client.send(SeedPublicGet())
            _ = try await client.send(SeedLoginGet())
            _ = try await client.send(SeedLoginFormPost(title: "a b"))
            _ = try await client.send(SeedLoginJSONPost(title: "x"))
            let seen = server.requests
            #expect(seen.count == 4)
            #expect(seen[0].uri == "/public")
            #expect(seen[0].header("Authorization") == nil)
            #expect(seen[1].uri == "/me?accessToken=T1")
            #expect(seen[1].header("Authorization") == nil)
            #expect(seen[2].uri == "/notes")
            #expect(seen[2].bodyText == "title=a+b&accessToken=T1")
            #expect(seen[3].bodyText == #"{"accessToken":"T1","title":"x"}"#)
        }
    }

    @Test func everyTrustedRequestStaysTheDefaultAndAnOwnParameterIsReplaced() async throws {
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            let store = TokenStore(credential: .init(accessToken: "T2"))
            let client = client(server, transport, [AuthorizationMiddleware(store: store, tokenParameter: "accessToken")])
            struct Stale: Endpoint {
                typealias Response = String
                var path: String { "x?accessToken=old&a=1" }
            }
            _ = try await client.send(SeedPublicGet())
            _ = try await client.send(Stale())
            #expect(server.requests.map(\.uri) == ["/public?accessToken=T2", "/x?a=1&accessToken=T2"])
        }
    }

    @Test func loginRequiredOnlyStillFailsALoginRequestWithoutCredential() async throws {
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            let client = client(server, transport, [AuthorizationMiddleware(store: TokenStore(), attachesOnlyWhenLoginRequired: true)])
            _ = try await client.send(SeedPublicGet())
            let error = await #expect(throws: CurlewError.self) { try await client.send(SeedLoginGet()) }
            #expect(error?.code == .notLoggedIn)
            #expect(server.requestCount == 1)
        }
    }

    @Test func basicAuthHelperSendsTheEncodedPair() async throws {
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            let client = client(server, transport, [AuthorizationMiddleware.basic(username: "ines", password: "p:w")])
            _ = try await client.send(SeedPublicGet())
            #expect(server.requests.first?.header("Authorization") == "Basic " + Data("ines:p:w".utf8).base64EncodedString())
            #expect(server.requests.first?.header("Authorization") == "Basic aW5lczpwOnc=")
        }
    }

    @Test func storageRestoresTheCredentialAndSavesRefreshAndSessionEnd() async throws {
        let auth = AuthServerState()
        auth.state.withLock {
            $0.validToken = "T1"; $0.refreshToken = "R1"
        }
        try await withLoopback(handler: { await auth.handle($0) }) { server, _, transport in
            let storage = RecordingCredentialStorage(initial: .init(accessToken: "T0", refreshToken: "R1"))
            let store = TokenStore(storage: storage)
            #expect(await store.current()?.0.accessToken == "T0")
            let client = TokenRefreshTests().makeClient(server, transport, store: store)
            let answer = try await client.send(Secure())
            #expect(answer == "hello T2")
            #expect(storage.history == ["T2"])
            await store.update(.init(accessToken: "T9"))
            await store.clear()
            #expect(storage.history == ["T2", "T9", nil])
        }
    }

    @Test func aFailedRefreshEndsTheSessionWhenConfigured() async throws {
        let auth = AuthServerState()
        auth.state.withLock { $0.refreshFailure = 500 }
        try await withLoopback(handler: { await auth.handle($0) }) { server, _, transport in
            let storage = RecordingCredentialStorage(initial: .init(accessToken: "T0", refreshToken: "R1"))
            let store = TokenStore(storage: storage)
            let refreshURL = server.baseURL + "/auth/refresh"
            let refresh = TokenRefreshMiddleware(store: store, endsSessionWhenRefreshFails: true) { credential in
                let raw = try await transport.send(
                    PreparedRequest(
                        method: .post, url: refreshURL, headers: [.contentType: "text/plain"], body: Data((credential.refreshToken ?? "").utf8)))
                throw CurlewError(code: .unauthorized, message: "refresh answered \(raw.status.code)")
            }
            let client = client(server, transport, [refresh, AuthorizationMiddleware(store: store)])
            let events = client.events
            let error = await #expect(throws: CurlewError.self) { try await client.send(Secure()) }
            #expect(error?.code == .sessionEnded)
            #expect((error?.underlying as? CurlewError)?.code == .refreshFailed)
            #expect(await store.current() == nil)
            #expect(storage.history == [nil])
            #expect(auth.refreshCalls == 1)
            #expect(auth.tokensSeen == ["T0"])
            var kinds: [ClientEvent.Kind] = []
            for await event in events where event.kind == .sessionEnded || event.kind == .failed {
                kinds.append(event.kind)
                if event.kind == .sessionEnded { #expect(event.reason == "refresh failed") }
                if event.kind == .failed { break }
            }
            #expect(kinds == [.sessionEnded, .failed])
            // A later login request fails before anything is sent.
            let later = await #expect(throws: CurlewError.self) { try await client.send(SeedLoginGet()) }
            #expect(later?.code == .notLoggedIn)
            #expect(server.requests(path: "/me").isEmpty)
        }
    }

    /// LSBaseRequest logs off only when the token server answers without a token: a refresh that
    /// cannot reach its server keeps the session even with `endsSessionWhenRefreshFails`.
    @Test func anUnreachableTokenServerKeepsTheSession() async throws {
        let auth = AuthServerState()
        try await withLoopback(handler: { await auth.handle($0) }) { server, _, transport in
            let store = TokenStore(credential: .init(accessToken: "T0", refreshToken: "R1"))
            let refresh = TokenRefreshMiddleware(store: store, endsSessionWhenRefreshFails: true) { _ in
                // Where nothing listens: the refresh fails in transport.
                _ = try await transport.send(PreparedRequest(method: .post, url: "http://127.0.0.1:9/auth/refresh"))
                return .init(accessToken: "never")
            }
            let client = client(server, transport, [refresh, AuthorizationMiddleware(store: store)])
            let error = await #expect(throws: CurlewError.self) { try await client.send(Secure()) }
            #expect(error?.code == .refreshFailed)
            #expect(CurlewError.wrapping(error?.underlying ?? CancellationError()).code == .cannotConnect)
            #expect(await store.current()?.0.accessToken == "T0")
            #expect(auth.tokensSeen == ["T0"])
        }
    }

    /// Monkey's refresh code arrives in an error body (a 401 whose envelope says 101102): the code
    /// is read from non-2xx bodies too, so refreshCodes triggers the refresh.
    @Test func aRefreshCodeInAnErrorBodyRefreshes() async throws {
        struct Profile: Endpoint {
            typealias Response = [String: String]
            var path: String { "me" }
            var envelope: ResponseEnvelope? { ResponseEnvelope(codePath: "code", messagePath: "msg", payloadPath: "data", successCodes: ["0"]) }
        }
        try await withLoopback(handler: { request in
            request.header("Authorization") == "Bearer T2"
                ? ServerResponse(headers: [("Content-Type", "application/json")], body: Array(#"{"code":0,"msg":"","data":{"name":"hello"}}"#.utf8))
                : ServerResponse(status: 401, headers: [("Content-Type", "application/json")], body: Array(#"{"code":101102,"msg":"token expired"}"#.utf8))
        }) { server, _, transport in
            let store = TokenStore(credential: .init(accessToken: "T1", refreshToken: "R1"))
            let refreshes = Mutex(0)
            let refresh = TokenRefreshMiddleware(store: store, refreshStatuses: [], refreshCodes: ["101102"]) { _ in
                refreshes.withLock { $0 += 1 }
                return .init(accessToken: "T2")
            }
            let client = client(server, transport, [refresh, AuthorizationMiddleware(store: store)])
            let answer = try await client.send(Profile())
            #expect(answer == ["name": "hello"])
            #expect(refreshes.withLock { $0 } == 1)
            #expect(server.requestCount == 2)
        }
    }

    /// LSBaseRequest's `sendCount`: while the server keeps answering 801, the request is sent once
    /// and resent at most three times (a refresh before each resend), then fails — which is
    /// `maximumAttempts: 4`; the default of 3 is the send and two resends.
    @Test func maximumAttemptsFourIsLSBaseRequestsThreeResends() async throws {
        struct Inquiry: Endpoint {
            typealias Response = [String: String]
            var path: String { "inquiries" }
            var envelope: ResponseEnvelope? { ResponseEnvelope(codePath: "code", messagePath: "msg", payloadPath: "data", successCodes: ["200"]) }
        }
        try await withLoopback(handler: { _ in .json(#"{"code":801,"msg":"token expired"}"#) }) { server, _, transport in
            for (attempts, sends) in [(4, 4), (3, 3)] {
                let store = TokenStore(credential: .init(accessToken: "T0", refreshToken: "R1"))
                let refreshes = Mutex(0)
                let refresh = TokenRefreshMiddleware(store: store, refreshStatuses: [], refreshCodes: ["801"], maximumAttempts: attempts) { _ in
                    .init(accessToken: "T\(refreshes.withLock { $0 += 1; return $0 })")
                }
                let client = client(server, transport, [refresh, AuthorizationMiddleware(store: store)])
                let before = server.requestCount
                let error = await #expect(throws: CurlewError.self) { try await client.send(Inquiry()) }
                #expect(error?.code == .unauthorized)
                #expect(error?.businessCode == "801")
                #expect(server.requestCount - before == sends)
                #expect(refreshes.withLock { $0 } == sends - 1)
                let tokens = server.requests.suffix(sends).map { $0.header("Authorization") ?? "" }
                #expect(tokens == (0..<sends).map { "Bearer T\($0)" })
            }
        }
    }

    @Test func theDefaultPolicyKeepsTheSession() async throws {
        let auth = AuthServerState()
        auth.state.withLock { $0.refreshFailure = 500 }
        try await withLoopback(handler: { await auth.handle($0) }) { server, _, transport in
            let store = TokenStore(credential: .init(accessToken: "T0", refreshToken: "R1"))
            let client = TokenRefreshTests().makeClient(server, transport, store: store)
            let error = await #expect(throws: CurlewError.self) { try await client.send(Secure()) }
            #expect(error?.code == .refreshFailed)
            #expect(await store.current()?.0.accessToken == "T0")
        }
    }
}
