import Curlew
import Foundation
import HTTPTypes
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// A server with single-use refresh tokens: `POST /auth/refresh` with body `R<n>` answers
/// `T<n+1>,R<n+1>` and retires `R<n>`; `/api/...` accepts only the current access token.
final class AuthServerState: Sendable {
    struct State {
        var validToken: String? = nil
        var refreshToken = "R1"
        var generation = 1
        var refreshCalls = 0
        var refreshFailure: Int? = nil
        var refreshDelay: Duration = .zero
        /// While true, the refresh endpoint waits (a gate the test opens, instead of a timing).
        var holdsRefresh = false
        var rejectEverything = false
        var tokensSeen: [String] = []
    }

    let state = Mutex(State())

    var refreshCalls: Int { state.withLock { $0.refreshCalls } }
    var tokensSeen: [String] { state.withLock { $0.tokensSeen } }

    func handle(_ request: ServerRequest) async -> ServerResponse {
        if request.path == "/auth/refresh" {
            let delay = state.withLock { $0.refreshDelay }
            if delay > .zero { try? await Task.sleep(for: delay) }
            while state.withLock({ $0.holdsRefresh }), !request.connection.isClosed {
                try? await Task.sleep(for: .milliseconds(5))
            }
            return state.withLock { state -> ServerResponse in
                state.refreshCalls += 1
                if let failure = state.refreshFailure { return .text("refresh refused", status: failure) }
                guard request.bodyText == state.refreshToken else { return .text("refresh token \(request.bodyText) is not valid", status: 401) }
                state.generation += 1
                state.validToken = "T\(state.generation)"
                state.refreshToken = "R\(state.generation)"
                return .text("T\(state.generation),R\(state.generation)")
            }
        }
        if request.path == "/api/hold" {
            // Answers only after the token has moved on: a late 401 for an old token.
            while state.withLock({ $0.generation }) == 1, !request.connection.isClosed {
                try? await Task.sleep(for: .milliseconds(5))
            }
        }
        let token = String((request.header("Authorization") ?? "").dropFirst("Bearer ".count))
        return state.withLock { state -> ServerResponse in
            state.tokensSeen.append(token)
            guard !state.rejectEverything, token == state.validToken else { return .text("expired", status: 401) }
            return .text("hello \(token)")
        }
    }
}

struct Secure: Endpoint {
    typealias Response = String
    var path: String = "api/me"
}

@Suite("Token refresh")
struct TokenRefreshTests {
    /// A client with refresh + authorization; the refresher talks to the transport directly.
    func makeClient(_ server: LoopbackServer, _ transport: CurlTransport, store: TokenStore, refreshCodes: Set<String> = []) -> APIClient {
        let refreshURL = server.baseURL + "/auth/refresh"
        let refresh = TokenRefreshMiddleware(store: store, refreshCodes: refreshCodes, sessionEndedCodes: ["802"]) { credential in
            let raw = try await transport.send(
                PreparedRequest(
                    method: .post, url: refreshURL, headers: [.contentType: "text/plain"], body: Data((credential.refreshToken ?? "").utf8)))
            guard raw.status == .ok else { throw CurlewError(code: .unauthorized, message: "refresh answered \(raw.status.code)") }
            let parts = String(decoding: raw.body, as: UTF8.self).split(separator: ",").map(String.init)
            guard parts.count == 2 else { throw CurlewError(code: .decodingFailed, message: "bad refresh body") }
            return TokenStore.Credential(accessToken: parts[0], refreshToken: parts[1])
        }
        let middleware: [any APIMiddleware] = [refresh, AuthorizationMiddleware(store: store)]
        return APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: middleware), transport: transport)
    }

    @Test func fiftyParallelExpiredRequestsShareOneRefresh() async throws {
        let auth = AuthServerState()
        try await withLoopback(handler: { await auth.handle($0) }) { server, _, transport in
            let store = TokenStore(credential: .init(accessToken: "T1", refreshToken: "R1"))
            let client = makeClient(server, transport, store: store)
            let answers = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<50 { group.addTask { try await client.send(Secure()) } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.count == 50)
            #expect(answers.allSatisfy { $0 == "hello T2" })
            #expect(auth.refreshCalls == 1)
            #expect(auth.tokensSeen.filter { $0 == "T1" }.count == 50)
            #expect(auth.tokensSeen.filter { $0 == "T2" }.count == 50)
            #expect(await store.refreshCount == 1)
        }
    }

    @Test func aPermanent401StopsAfterThreeAttempts() async throws {
        let auth = AuthServerState()
        auth.state.withLock { $0.rejectEverything = true }
        try await withLoopback(handler: { await auth.handle($0) }) { server, _, transport in
            let client = makeClient(server, transport, store: TokenStore(credential: .init(accessToken: "T1", refreshToken: "R1")))
            let error = await #expect(throws: CurlewError.self) { try await client.send(Secure()) }
            #expect(error?.code == .unauthorized)
            #expect(error?.level == .auth)
            #expect(error?.status == .unauthorized)
            #expect((error?.underlying as? CurlewError)?.code == .unacceptableStatus)
            #expect(auth.tokensSeen == ["T1", "T2", "T3"])
            #expect(auth.refreshCalls == 2)
        }
    }

    @Test func aFailedRefreshGivesEveryWaiterTheSameErrorAndTheNextRequestRefreshesAgain() async throws {
        let auth = AuthServerState()
        auth.state.withLock {
            $0.refreshFailure = 500
            $0.refreshDelay = .milliseconds(100)
        }
        try await withLoopback(handler: { await auth.handle($0) }) { server, _, transport in
            let client = makeClient(server, transport, store: TokenStore(credential: .init(accessToken: "T1", refreshToken: "R1")))
            let errors = await withTaskGroup(of: CurlewError?.self) { group in
                for _ in 0..<10 {
                    group.addTask {
                        do { _ = try await client.send(Secure()); return nil } catch { return error as? CurlewError }
                    }
                }
                return await group.reduce(into: [CurlewError?]()) { $0.append($1) }
            }
            #expect(errors.count == 10)
            #expect(errors.allSatisfy { $0?.code == .refreshFailed })
            #expect(Set(errors.map { $0?.message ?? "" }).count == 1)
            #expect(auth.refreshCalls == 1)

            auth.state.withLock {
                $0.refreshFailure = nil
                $0.refreshDelay = .zero
            }
            let recovered = try await client.send(Secure())
            #expect(recovered == "hello T2")
            #expect(auth.refreshCalls == 2)
        }
    }

    @Test func aRefreshEndpointAnswering401DoesNotRecurse() async throws {
        let auth = AuthServerState()
        auth.state.withLock { $0.refreshFailure = 401 }
        try await withLoopback(handler: { await auth.handle($0) }) { server, _, transport in
            let client = makeClient(server, transport, store: TokenStore(credential: .init(accessToken: "T1", refreshToken: "R1")))
            let error = await #expect(throws: CurlewError.self) { try await client.send(Secure()) }
            #expect(error?.code == .refreshFailed)
            #expect(error?.level == .auth)
            #expect(auth.refreshCalls == 1)
            #expect(server.requests.map(\.path) == ["/api/me", "/auth/refresh"])
        }
    }

    @Test func aLate401ForTheOldTokenRetriesWithTheNewOneWithoutRefreshingAgain() async throws {
        let auth = AuthServerState()
        try await withLoopback(handler: { await auth.handle($0) }) { server, _, transport in
            let client = makeClient(server, transport, store: TokenStore(credential: .init(accessToken: "T1", refreshToken: "R1")))
            let late = Task { try await client.send(Secure(path: "api/hold")) }
            await waitForRequests(server, count: 1)
            let fresh = try await client.send(Secure())
            let lateAnswer = try await late.value
            #expect(fresh == "hello T2")
            #expect(lateAnswer == "hello T2")
            #expect(auth.refreshCalls == 1, "R1 is single-use: a second refresh would have failed")
        }
    }

    @Test func aLogoutDuringTheRefreshFailsTheCallAndTheRefreshedTokenIsNeverSent() async throws {
        let auth = AuthServerState()
        auth.state.withLock { $0.holdsRefresh = true }
        try await withLoopback(handler: { await auth.handle($0) }) { server, _, transport in
            let store = TokenStore(credential: .init(accessToken: "T1", refreshToken: "R1"))
            let client = makeClient(server, transport, store: store)
            let call = Task { try await client.send(Secure()) }
            #expect(await eventually { server.requests(path: "/auth/refresh").count == 1 })
            await store.clear()
            auth.state.withLock { $0.holdsRefresh = false }
            let error = await #expect(throws: CurlewError.self) { try await call.value }
            #expect(error?.code == .notLoggedIn)
            #expect(error?.status == .unauthorized)
            #expect(auth.tokensSeen == ["T1"], "the refreshed T2 must not go out after the logout")
            #expect(store.snapshot == nil)
            #expect(await store.refreshCount == 0)
        }
    }

    @Test func cancellingTheCallerThatStartedTheRefreshDoesNotHurtTheOthers() async throws {
        let auth = AuthServerState()
        auth.state.withLock { $0.refreshDelay = .milliseconds(200) }
        try await withLoopback(handler: { await auth.handle($0) }) { server, _, transport in
            let client = makeClient(server, transport, store: TokenStore(credential: .init(accessToken: "T1", refreshToken: "R1")))
            let starter = Task { try await client.send(Secure()) }
            #expect(await eventually { server.requests(path: "/auth/refresh").count == 1 })
            let others = (0..<3).map { _ in Task { try await client.send(Secure()) } }
            await waitForRequests(server, count: 5)
            starter.cancel()
            for other in others {
                let answer = try await other.value
                #expect(answer == "hello T2")
            }
            if case .success = await starter.result {
                // It may already have been past its last suspension point; either way nothing broke.
            }
            #expect(auth.refreshCalls == 1)
        }
    }

    @Test func businessCodesTriggerRefreshAndSessionEnd() async throws {
        let auth = AuthServerState()
        let codes = Mutex(["801", "0", "802"])
        try await withLoopback(handler: { request in
            if request.path == "/auth/refresh" { return await auth.handle(request) }
            let code = codes.withLock { $0.isEmpty ? "0" : $0.removeFirst() }
            return .json(#"{"code":\#(code),"msg":"m\#(code)","data":{"id":1,"title":"t"}}"#)
        }) { server, _, transport in
            let store = TokenStore(credential: .init(accessToken: "T1", refreshToken: "R1"))
            let client = makeClient(server, transport, store: store, refreshCodes: ["801"])
            let events = client.events
            let picture = try await client.send(GetEnveloped(path: "api/p", envelope: .codeMsgData))
            #expect(picture.id == 1)
            #expect(auth.refreshCalls == 1)
            let ended = await #expect(throws: CurlewError.self) { try await client.send(GetEnveloped(path: "api/p", envelope: .codeMsgData)) }
            #expect(ended?.code == .sessionEnded)
            #expect(ended?.businessCode == "802")
            #expect(await store.current() == nil)
            var seen: [ClientEvent] = []
            for await event in events where event.kind == .credentialRefreshed || event.kind == .sessionEnded {
                seen.append(event)
                if event.kind == .sessionEnded { break }
            }
            #expect(seen.map(\.kind) == [.credentialRefreshed, .sessionEnded])
            #expect(seen.first?.credentialVersion == 1)
            #expect(seen.last?.reason == "business code 802")
            #expect(seen.allSatisfy { $0.requestName == "GetEnveloped" && $0.requestID != nil })
            #expect(seen.first?.requestID != seen.last?.requestID, "two calls, two ids")
        }
    }

    /// A "session ended" answer that arrives after the user logged in again ends the old
    /// session, not the new one: the call fails with `.sessionEnded` and the new credential
    /// stays, until an answer for it ends that session too.
    @Test func aLateSessionEndForAnOldTokenKeepsTheNewLogin() async throws {
        let open = Mutex(false)
        try await withLoopback(handler: { request in
            while !open.withLock({ $0 }), !request.connection.isClosed { try? await Task.sleep(for: .milliseconds(5)) }
            return .text("forced logout", status: 403)
        }) { server, _, transport in
            let store = TokenStore(credential: .init(accessToken: "T1"))
            let middleware: [any APIMiddleware] = [TokenRefreshMiddleware(store: store, sessionEndedStatuses: [403]) { $0 }, AuthorizationMiddleware(store: store)]
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: middleware), transport: transport)
            let events = client.events
            let late = Task { try await client.send(Secure()) }
            await waitForRequests(server, count: 1)
            await store.update(.init(accessToken: "T2"))
            open.withLock { $0 = true }
            let ended = await #expect(throws: CurlewError.self) { try await late.value }
            #expect(ended?.code == .sessionEnded)
            #expect(await store.current()?.0.accessToken == "T2")
            // The next call, with T2, is refused too: that one ends the session (one event).
            _ = await #expect(throws: CurlewError.self) { try await client.send(Secure()) }
            #expect(await store.current() == nil)
            // One event, from the call that ended the session in force.
            for await event in events where event.kind == .sessionEnded {
                #expect(event.reason == "HTTP 403")
                break
            }
        }
    }

    /// A client that refreshes `store`'s credential (calling `counted` for each refresh) and
    /// ends the session on a 403.
    private func refreshingClient(
        _ baseURL: String, _ transport: CurlTransport, store: TokenStore, counted: @escaping @Sendable () -> Void
    ) -> APIClient {
        let refresh = TokenRefreshMiddleware(store: store, sessionEndedStatuses: [403]) { credential in
            counted()
            return credential
        }
        return APIClient(
            configuration: ClientConfiguration(baseURL: baseURL, middleware: [refresh, AuthorizationMiddleware(store: store)]), transport: transport)
    }

    /// A trusted URL that redirects to an untrusted origin (a storage host): that origin got no
    /// credential, so its 401 refreshes nothing and its "session ended" status logs nobody out.
    @Test func aRedirectToAnUntrustedOriginsAnswerNeitherRefreshesNorEndsTheSession() async throws {
        let other = try await LoopbackServer.start { request in
            request.path == "/gone" ? .text("expired link", status: 403) : .text("who are you", status: 401)
        }
        defer { Task { await other.shutdown() } }
        try await withLoopback(handler: { request in
            .redirect(to: other.baseURL + (request.path == "/expired" ? "/gone" : "/image"), status: 302)
        }) { server, _, transport in
            let store = TokenStore(credential: .init(accessToken: "T1", refreshToken: "R1"))
            let refreshes = Mutex(0)
            let client = refreshingClient(server.baseURL, transport, store: store) { refreshes.withLock { $0 += 1 } }
            let refused = await #expect(throws: CurlewError.self) { try await client.send(Secure(path: "download")) }
            #expect(refused?.code == .unacceptableStatus)
            #expect(refused?.status == .unauthorized)
            let gone = await #expect(throws: CurlewError.self) { try await client.send(Secure(path: "expired")) }
            #expect(gone?.code == .unacceptableStatus)
            #expect(refreshes.withLock { $0 } == 0)
            #expect(server.requestCount == 2)
            #expect(other.requestCount == 2)
            #expect(other.requests.allSatisfy { $0.header("Authorization") == nil })
            #expect(await store.current()?.0.accessToken == "T1")
        }
    }

    /// An origin the client does not trust never receives the credential, so its 401 refreshes
    /// nothing and its "session ended" status logs nobody out: the caller gets the answer.
    @Test func anUntrustedOriginsAnswersNeitherRefreshNorEndTheSession() async throws {
        let other = try await LoopbackServer.start { request in
            request.path == "/gone" ? .text("bye", status: 403) : .text("who are you", status: 401)
        }
        defer { Task { await other.shutdown() } }
        let auth = AuthServerState()
        try await withLoopback(handler: { await auth.handle($0) }) { server, _, transport in
            let store = TokenStore(credential: .init(accessToken: "T1", refreshToken: "R1"))
            let refreshes = Mutex(0)
            let client = refreshingClient(server.baseURL, transport, store: store) { refreshes.withLock { $0 += 1 } }
            let refused = await #expect(throws: CurlewError.self) { try await client.send(Secure(path: other.baseURL + "/image")) }
            #expect(refused?.code == .unacceptableStatus)
            #expect(refused?.status == .unauthorized)
            let gone = await #expect(throws: CurlewError.self) { try await client.send(Secure(path: other.baseURL + "/gone")) }
            #expect(gone?.code == .unacceptableStatus)
            #expect(refreshes.withLock { $0 } == 0)
            #expect(other.requestCount == 2)
            #expect(other.requests.allSatisfy { $0.header("Authorization") == nil })
            #expect(await store.current()?.0.accessToken == "T1")
        }
    }
}
