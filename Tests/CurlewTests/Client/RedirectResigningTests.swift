import Curlew
import Foundation
import HTTPTypes
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// A client call follows redirects above the URL-dependent middleware: a same-origin hop is
/// authorised and signed again for its own URL, a cross-origin hop gets neither.
@Suite("Redirect hops and URL-dependent middleware")
struct RedirectResigningTests {
    private func client(_ baseURL: String, _ transport: CurlTransport) -> APIClient {
        let store = TokenStore(credential: .init(accessToken: "T1"))
        let middleware: [any APIMiddleware] = [
            AuthorizationMiddleware(store: store),
            SigningMiddleware(secret: "s3cret", output: .header(HTTPField.Name("X-Sign")!)),
        ]
        return APIClient(configuration: ClientConfiguration(baseURL: baseURL, middleware: middleware), transport: transport)
    }

    @Test func aSameOriginHopIsSignedAndAuthorisedForItsOwnURL() async throws {
        try await withLoopback(handler: { request in
            request.path == "/start" ? .redirect(to: "/next?x=1", status: 302) : .text("arrived")
        }) { server, _, transport in
            let client = client(server.baseURL, transport)
            let events = client.events
            #expect(try await client.send(FetchText(path: "start")) == "arrived")
            let requests = server.requests
            #expect(requests.map(\.path) == ["/start", "/next"])
            let first = try #require(requests.first)
            let hop = try #require(requests.last)
            #expect(hop.header("Authorization") == "Bearer T1")
            let firstSignature = try #require(first.header("X-Sign"))
            let hopSignature = try #require(hop.header("X-Sign"), "the hop was signed")
            #expect(hopSignature != firstSignature, "signed for its own URL, not a copy of the first signature")
            #expect(hop.headerValues("X-Sign").count == 1)
            for await event in events {
                if event.kind == .redirected {
                    #expect(event.location == server.baseURL + "/next?x=1")
                    break
                }
            }
        }
    }

    @Test func aCrossOriginHopGetsNoCredentialAndNoSignature() async throws {
        let other = try await LoopbackServer.start { _ in .text("elsewhere") }
        try await withLoopback(handler: { request in
            .redirect(to: other.baseURL + "/landing", status: 307)
        }) { server, _, transport in
            let client = client(server.baseURL, transport)
            #expect(try await client.send(FetchText(path: "start")) == "elsewhere")
            let first = try #require(server.requests.first)
            #expect(first.header("Authorization") == "Bearer T1")
            #expect(first.header("X-Sign") != nil)
            let landed = try #require(other.requests.first)
            #expect(landed.header("Authorization") == nil)
            #expect(landed.header("X-Sign") == nil)
            #expect(other.requestCount == 1)
        }
        await other.shutdown()
    }

    /// A login-required call is checked where it starts: the server may send it to another
    /// origin (a signed storage URL), which is followed without the credential, and a same-origin
    /// hop keeps the requirement.
    @Test func aLoginRequiredCallFollowsACrossOriginHopWithoutTheCredential() async throws {
        let other = try await LoopbackServer.start { _ in .text("stored") }
        do {
            try await withLoopback(handler: { request in
                request.path == "/me" ? .redirect(to: "/me/file", status: 302) : .redirect(to: other.baseURL + "/blob?sig=x", status: 302)
            }) { server, _, transport in
                let client = client(server.baseURL, transport)
                let answer = try await client.send(FetchText(path: "me")) { $0.requiresAuthentication = true }
                #expect(answer == "stored")
                #expect(server.requests.map(\.path) == ["/me", "/me/file"])
                #expect(server.requests.allSatisfy { $0.header("Authorization") == "Bearer T1" })
                #expect(other.requests.map(\.uri) == ["/blob?sig=x"])
                #expect(other.requests.first?.header("Authorization") == nil)
            }
        } catch {
            await other.shutdown()
            throw error
        }
        await other.shutdown()
    }

    /// A middleware without a phase keeps its place; placed after the URL-dependent ones (here
    /// innermost, or added to one call) it must not move the redirect step below them, or a hop
    /// would carry the first hop's signature and custom credential header to another origin.
    @Test(arguments: [false, true])
    func aPhaseLessMiddlewareAfterSigningKeepsHopsUnsigned(addedPerCall: Bool) async throws {
        let other = try await LoopbackServer.start { _ in .text("elsewhere") }
        do {
            try await withLoopback(handler: { request in
                request.path == "/start" ? .redirect(to: "/same?x=1", status: 302) : .redirect(to: other.baseURL + "/landing", status: 307)
            }) { server, _, transport in
                let store = TokenStore(credential: .init(accessToken: "T1"))
                let counter = HopCounter()
                var middleware: [any APIMiddleware] = [
                    AuthorizationMiddleware(store: store, headerName: HTTPField.Name("X-Auth-Token")!, scheme: ""),
                    SigningMiddleware(secret: "s3cret", output: .header(HTTPField.Name("X-Sign")!)),
                ]
                if !addedPerCall { middleware.append(counter) }
                let client = APIClient(
                    configuration: ClientConfiguration(baseURL: server.baseURL, middleware: middleware), transport: transport)
                let answer = try await client.send(FetchText(path: "start")) {
                    if addedPerCall { $0.middleware = [counter] }
                }
                #expect(answer == "elsewhere")
                #expect(server.requests.map(\.path) == ["/start", "/same"])
                let signatures = server.requests.compactMap { $0.header("X-Sign") }
                #expect(signatures.count == 2 && signatures[0] != signatures[1], "the same-origin hop was signed for its own URL")
                let landed = try #require(other.requests.first)
                #expect(landed.header("X-Auth-Token") == nil)
                #expect(landed.header("X-Sign") == nil)
                #expect(counter.count == 3, "the inner middleware sees every hop it sends")
            }
        } catch {
            await other.shutdown()
            throw error
        }
        await other.shutdown()
    }

    /// The total timeout is the call's, not each hop's: a chain of slow redirects, each well
    /// inside it, fails once their sum passes it.
    @Test func theTotalTimeoutSpansEveryHop() async throws {
        try await withLoopback(handler: { request in
            guard let hop = Int(request.path.dropFirst()), hop < 6 else { return .text("arrived") }
            return .stream(status: 302, headers: [("Location", "/\(hop + 1)")]) { writer in
                try await Task.sleep(for: .milliseconds(400))
                try await writer.write(Array("moved".utf8))
            }
        }) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) {
                try await client.send(FetchText(path: "1")) { $0.totalTimeout = .seconds(1) }
            }
            #expect(error?.code == .totalTimeout)
            #expect(server.requestCount <= 3, "no hop starts once the second has passed")
        }
    }

    @Test func aRedirectLimitOfZeroReturnsTheRedirect() async throws {
        try await withLoopback(
            transferOptions: {
                var options = TransferOptions(); options.redirectLimit = 0; return options
            }(),
            handler: { _ in
                .redirect(to: "/elsewhere", status: 302)
            }
        ) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.send(FetchText(path: "start")) }
            #expect(error?.code == .unacceptableStatus)
            #expect(error?.status?.code == 302)
            #expect(server.requestCount == 1)
        }
    }

    @Test func tooManyRedirectsAtTheClient() async throws {
        try await withLoopback(
            transferOptions: {
                var options = TransferOptions(); options.redirectLimit = 3; return options
            }(),
            handler: { request in
                .redirect(to: "/loop", status: 302)
            }
        ) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.send(FetchText(path: "start")) }
            #expect(error?.code == .tooManyRedirects)
            #expect(server.requestCount == 4, "the first request and three hops")
        }
    }

    /// A redirect that keeps the query (nginx's trailing-slash redirect) brings the first hop's
    /// timestamp and signature back in its `Location`: the hop carries one of each, its own, and
    /// the server verifies it over what it received.
    @Test func aLocationThatRepeatsTheSignedQueryIsSignedAgainNotTwice() async throws {
        let verifier = SignatureVerifier(secret: "123456")
        try await withLoopback(handler: { request in
            guard request.path == "/items" else { return verifier.answer(request) }
            let query = request.uri.split(separator: "?", maxSplits: 1).dropFirst().first.map(String.init) ?? ""
            return .redirect(to: "/items/?" + query, status: 301)
        }) { server, _, transport in
            let signing = SigningMiddleware(secret: "123456", output: .parameter("sign"), timestampParameter: "ts", nonceParameter: "nonce")
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [signing]), transport: transport)
            #expect(try await client.send(Send(path: "items", query: [URLQueryItem(name: "x", value: "1")])) == "signed")
            let requests = server.requests
            #expect(requests.map(\.path) == ["/items", "/items/"])
            let hop = try #require(requests.last)
            #expect(hop.queryItems.map(\.name).sorted() == ["nonce", "sign", "ts", "x"])
            #expect(hop.queryValue("nonce") != requests.first?.queryValue("nonce"), "a nonce of its own")
            #expect(verifier.verdicts == [true])
        }
    }
}

/// A phase-less middleware that counts the requests passing through it.
private final class HopCounter: APIMiddleware, Sendable {
    private let hops = Mutex(0)
    var count: Int { hops.withLock { $0 } }

    func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        hops.withLock { $0 += 1 }
        return try await next(request, context)
    }
}
