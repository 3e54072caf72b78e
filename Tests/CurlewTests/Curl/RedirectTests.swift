import Curlew
import Foundation
import LoopbackServer
import Testing

@Suite("Redirects")
struct RedirectTests {
    @Test func sameOriginRedirectKeepsAuthorization() async throws {
        var router = LoopbackRouter()
        router.on("GET", "/old") { _, _ in .redirect(to: "/new") }
        router.on("GET", "/new") { request, _ in .text(request.header("Authorization") ?? "none") }
        try await withLoopback(router: router) { server, client, _ in
            let response = try await client.response(for: Send(path: "old", headers: ["Authorization": "Bearer T1"]))
            #expect(response.value == "Bearer T1")
            #expect(response.url.hasSuffix("/new"))
            #expect(server.requests.map(\.path) == ["/old", "/new"])
        }
    }

    @Test func redirectToAnotherPortDropsAuthorizationAndCookie() async throws {
        let other = try await LoopbackServer.start { request in .text("landed") }
        let target = other.baseURL + "/landing"
        try await withLoopback(handler: { _ in .redirect(to: target) }) { server, client, _ in
            let text = try await client.send(Send(path: "start", headers: ["Authorization": "Bearer secret", "Cookie": "session=s1", "X-Plain": "kept"]))
            #expect(text == "landed")
            #expect(server.requests.first?.header("Authorization") == "Bearer secret")
            let landed = try #require(other.requests.first)
            #expect(landed.path == "/landing")
            #expect(landed.header("Authorization") == nil)
            #expect(landed.header("Cookie") == nil)
            #expect(landed.header("X-Plain") == "kept")
        }
        await other.shutdown()
    }

    @Test func redirectToFileSchemeIsRefused() async throws {
        try await withLoopback(handler: { _ in .redirect(to: "file:///etc/passwd") }) { _, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "x")) }
            #expect(error?.code == .redirectRefused)
        }
    }

    @Test func redirectLoopStopsAtTheLimit() async throws {
        var options = TransferOptions()
        options.redirectLimit = 3
        try await withLoopback(transferOptions: options, handler: { _ in .redirect(to: "/again") }) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "x")) }
            #expect(error?.code == .tooManyRedirects)
            #expect(server.requestCount == 4)
        }
    }

    @Test func redirectLimitZeroReturnsTheRedirect() async throws {
        var options = TransferOptions()
        options.redirectLimit = 0
        try await withLoopback(transferOptions: options, handler: { _ in .redirect(to: "/next") }) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "x")) }
            #expect(error?.status?.code == 302)
            #expect(server.requestCount == 1)
        }
    }
}
