import Curlew
import Foundation
import HTTPTypes
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// Credentials as a server sees them, and the errors of common auth mistakes, against the
/// loopback server and httpbin.
@Suite("Auth on the wire", .timeLimit(.minutes(1)))
struct AuthOnTheWireTests {
    /// A token with a line break (read from a file, pasted) is refused before anything is sent,
    /// instead of going out with the break turned into a space (a credential the server never
    /// issued); the message does not repeat the secret.
    @Test func aCredentialWithALineBreakIsRefusedUnsent() async throws {
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            for token in ["abc\r\nX-Injected: 1", "abc\u{0}def", "abc\ndef"] {
                let store = TokenStore(credential: .init(accessToken: token))
                let client = APIClient(
                    configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [AuthorizationMiddleware(store: store)]),
                    transport: transport)
                let error = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "me")) }
                #expect(error?.code == .invalidHeader)
                #expect(error?.stage == .middleware(.authorization))
                #expect(error?.message == "the credential cannot be sent in header Authorization: it contains CR, LF, NUL or another control character")
                #expect(error.map { "\($0)" }?.contains("abc") == false)
            }
            #expect(server.requestCount == 0)
        }
    }

    /// Characters that are legal but need care travel unchanged: in the header as they are, and
    /// as a query or form parameter percent-encoded and decoded back by the server.
    @Test func aTokenWithReservedCharactersArrivesIntact() async throws {
        let token = "a+b/c==&d?e#f g%20"
        let seen = Mutex<[String]>([])
        try await withLoopback(handler: { request in
            seen.withLock {
                $0.append(request.header("Authorization") ?? request.queryValue("access_token") ?? "body:" + request.bodyText)
            }
            return .text("ok")
        }) { server, _, transport in
            let store = TokenStore(credential: .init(accessToken: token))
            let header = APIClient(
                configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [AuthorizationMiddleware(store: store)]), transport: transport)
            let query = APIClient(
                configuration: ClientConfiguration(
                    baseURL: server.baseURL, middleware: [AuthorizationMiddleware(store: store, tokenParameter: "access_token")]),
                transport: transport)
            let form = APIClient(
                configuration: ClientConfiguration(
                    baseURL: server.baseURL,
                    middleware: [AuthorizationMiddleware(store: store, tokenParameter: "access_token", placement: .alongsideParameters)]),
                transport: transport)
            _ = try await header.send(Send(path: "h"))
            _ = try await query.send(Send(path: "q"))
            _ = try await form.send(Send(method: .post, path: "f", body: .form([URLQueryItem(name: "a", value: "1")])))
        }
        #expect(
            seen.withLock { $0 } == [
                "Bearer a+b/c==&d?e#f g%20", "a+b/c==&d?e#f g%20", "body:a=1&access_token=a%2Bb%2Fc%3D%3D%26d%3Fe%23f+g%2520",
            ])
    }

    /// A 401 names the scheme the server asks for: a Digest endpoint (Curlew sends Basic and
    /// Bearer, not Digest), a wrong Basic password, a Bearer endpoint called without a token.
    /// An `AuthorizationMiddleware` of another store than the refresh middleware's (Basic
    /// credentials beside a refreshed bearer token) sends its own store's credential, not the
    /// token the refresh middleware chose.
    @Test func anAuthorizationOfAnotherStoreSendsItsOwnCredential() async throws {
        let seen = Mutex<[String]>([])
        try await withLoopback(handler: { request in
            seen.withLock { $0.append(request.header("Authorization") ?? "none") }
            return .text("ok")
        }) { server, _, transport in
            let bearer = TokenStore(credential: .init(accessToken: "bearer-token", refreshToken: "r"))
            let refresh = TokenRefreshMiddleware(store: bearer) { $0 }
            let client = APIClient(
                configuration: ClientConfiguration(
                    baseURL: server.baseURL, middleware: [refresh, AuthorizationMiddleware.basic(username: "u", password: "p")]),
                transport: transport)
            _ = try await client.send(Send(path: "basic"))
            let sameStore = APIClient(
                configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [refresh, AuthorizationMiddleware(store: bearer)]),
                transport: transport)
            _ = try await sameStore.send(Send(path: "bearer"))
        }
        #expect(seen.withLock { $0 } == ["Basic dTpw", "Bearer bearer-token"])
    }

    @Test func a401NamesTheSchemeTheServerAsksFor() async throws {
        let base = try TestServers.httpbin()
        let basic = APIClient(
            configuration: ClientConfiguration(baseURL: base, middleware: [AuthorizationMiddleware.basic(username: "u", password: "p")]))
        let digest = await #expect(throws: CurlewError.self) { try await basic.send(Send(path: "digest-auth/auth/u/p")) }
        #expect(digest?.code == .unacceptableStatus)
        #expect(digest?.status == .unauthorized)
        #expect(digest?.message == "unacceptable status 401 (the server asks for Digest authentication)")
        let wrong = await #expect(throws: CurlewError.self) { try await basic.send(Send(path: "basic-auth/u/other")) }
        #expect(wrong?.message == "unacceptable status 401 (the server asks for Basic authentication)")
        #expect(try await basic.send(Send(path: "basic-auth/u/p")).contains("\"authenticated\":true"))

        let loggedOut = APIClient(configuration: ClientConfiguration(baseURL: base, middleware: [AuthorizationMiddleware(store: TokenStore())]))
        let missing = await #expect(throws: CurlewError.self) { try await loggedOut.send(Send(path: "bearer")) }
        #expect(missing?.message == "unacceptable status 401 (the server asks for Bearer authentication)")
        let required = await #expect(throws: CurlewError.self) {
            try await loggedOut.send(Send(path: "bearer"), options: { $0.requiresAuthentication = true })
        }
        #expect(required?.code == .notLoggedIn)
        #expect(required?.stage == .middleware(.authorization))
    }

    /// A 403 is not a reason to refresh: the credential was accepted and does not allow the call.
    @Test func a403FailsAsItIsWithoutARefresh() async throws {
        let base = try TestServers.httpbin()
        let refreshes = Mutex(0)
        let store = TokenStore(credential: .init(accessToken: "T1", refreshToken: "R1"))
        let client = APIClient(
            configuration: ClientConfiguration(
                baseURL: base,
                middleware: [
                    AuthorizationMiddleware(store: store),
                    TokenRefreshMiddleware(store: store) { old in
                        refreshes.withLock { $0 += 1 }
                        return .init(accessToken: "T2", refreshToken: old.refreshToken)
                    },
                ]))
        let forbidden = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "status/403")) }
        #expect(forbidden?.code == .unacceptableStatus)
        #expect(forbidden?.status == .forbidden)
        #expect(forbidden?.message == "unacceptable status 403")
        #expect(refreshes.withLock { $0 } == 0)
        let unauthorized = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "status/401")) }
        #expect(unauthorized?.code == .unauthorized)
        #expect(unauthorized?.message == "still unauthorized after 3 attempts")
        #expect(refreshes.withLock { $0 } == 2)
    }
}
