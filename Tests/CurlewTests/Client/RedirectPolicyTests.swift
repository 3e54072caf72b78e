@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

/// One redirect policy (RFC 9110 §15.4) whoever asks: methods, bodies, content headers,
/// credentials across origins, downgrades.
@Suite("Redirect policy")
struct RedirectPolicyTests {
    struct Case: Sendable, CustomStringConvertible {
        var method: HTTPRequest.Method
        var status: Int
        var landsAs: String
        var keepsBody: Bool
        var description: String { "\(method.rawValue) \(status)" }
    }

    static let cases: [Case] = [
        Case(method: .post, status: 303, landsAs: "GET", keepsBody: false),
        Case(method: .put, status: 303, landsAs: "GET", keepsBody: false),
        Case(method: .delete, status: 303, landsAs: "GET", keepsBody: false),
        Case(method: .head, status: 303, landsAs: "HEAD", keepsBody: false),
        Case(method: .post, status: 301, landsAs: "GET", keepsBody: false),
        Case(method: .post, status: 302, landsAs: "GET", keepsBody: false),
        Case(method: .put, status: 301, landsAs: "PUT", keepsBody: true),
        Case(method: .patch, status: 302, landsAs: "PATCH", keepsBody: true),
        Case(method: .delete, status: 301, landsAs: "DELETE", keepsBody: true),
        Case(method: .post, status: 307, landsAs: "POST", keepsBody: true),
        Case(method: .post, status: 308, landsAs: "POST", keepsBody: true),
        Case(method: .put, status: 307, landsAs: "PUT", keepsBody: true),
        Case(method: .patch, status: 308, landsAs: "PATCH", keepsBody: true),
        Case(method: .get, status: 302, landsAs: "GET", keepsBody: false),
    ]

    @Test(arguments: cases, [false, true])
    func methodsAndBodiesFollowRFC9110(_ rule: Case, withOriginBoundHeaders: Bool) async throws {
        try await withLoopback(handler: { request in
            if request.path == "/from" { return .redirect(to: "/landing", status: Int(request.queryValue("status") ?? "302") ?? 302) }
            return .text("landed")
        }) { server, _, transport in
            var request = PreparedRequest(
                method: rule.method, url: server.baseURL + "/from?status=\(rule.status)",
                body: rule.method == .get || rule.method == .head ? nil : Data("payload".utf8),
                options: http1Options { if withOriginBoundHeaders { $0.originBoundHeaders = [HTTPField.Name("X-Sign")!] } })
            if request.content != nil {
                request.headers[.contentType] = "text/plain"
                request.headers[.contentLanguage] = "en"
            }
            let response = try await followingRedirects(request, over: transport)
            #expect(response.status.code == 200)
            let requests = server.requests
            #expect(requests.map(\.path) == ["/from", "/landing"])
            let landed = try #require(requests.last)
            #expect(landed.method == rule.landsAs, "\(rule)")
            if rule.keepsBody {
                #expect(landed.bodyText == "payload", "\(rule)")
                #expect(landed.header("Content-Type") == "text/plain", "\(rule)")
                #expect(landed.header("Content-Language") == "en", "\(rule)")
            } else {
                #expect(landed.body.isEmpty, "\(rule)")
                #expect(landed.header("Content-Type") == nil, "\(rule): content headers go with the body")
                #expect(landed.header("Content-Language") == nil, "\(rule)")
                #expect(landed.header("Content-Length") == nil || landed.header("Content-Length") == "0", "\(rule)")
            }
        }
    }

    @Test(arguments: [307, 308, 301])
    func aOneShotBodyIsNotResentToARedirectTarget(status: Int) async throws {
        try await withLoopback(handler: { request in
            request.path == "/from" ? .redirect(to: "/landing", status: status) : .text("landed")
        }) { server, _, transport in
            let stream = RequestBodyStream.once(
                length: 7,
                AsyncThrowingStream<Data, any Error> {
                    $0.yield(Data("payload".utf8)); $0.finish()
                })
            let request = PreparedRequest(method: .put, url: server.baseURL + "/from", content: .stream(stream), options: http1Options())
            let error = await #expect(throws: CurlewError.self) { _ = try await followingRedirects(request, over: transport) }
            #expect(error?.code == .redirectRefused)
            #expect(server.requests.map(\.path) == ["/from"])
        }
    }

    @Test func crossOriginHopsLoseCredentialsSameOriginHopsKeepThem() async throws {
        let other = try await LoopbackServer.start { _ in .text("other") }
        try await withLoopback(handler: { request in
            switch request.path {
            case "/away": .redirect(to: other.baseURL + "/there", status: 307)
            case "/near": .redirect(to: "/here", status: 307)
            default: .text("here")
            }
        }) { server, _, transport in
            for path in ["/away", "/near"] {
                var request = PreparedRequest(method: .get, url: server.baseURL + path, options: http1Options())
                request.headers[.authorization] = "Bearer secret"
                request.headers[.cookie] = "a=1"
                request.headers[.proxyAuthorization] = "Basic x"
                _ = try await followingRedirects(request, over: transport)
            }
            let there = try #require(other.requests.first)
            #expect(there.header("Authorization") == nil)
            #expect(there.header("Cookie") == nil)
            #expect(there.header("Proxy-Authorization") == nil)
            let here = try #require(server.requests.last)
            #expect(here.path == "/here")
            #expect(here.header("Authorization") == "Bearer secret")
            #expect(here.header("Cookie") == "a=1")
        }
        await other.shutdown()
    }

    @Test func anHTTPSToHTTPHopIsRefusedUnlessAllowedAndThenCarriesNoCredential() throws {
        var request = PreparedRequest(method: .post, url: "https://api.example.com/a?x=1", body: Data("b".utf8))
        request.headers[.authorization] = "Bearer secret"
        request.headers[.cookie] = "s=1"
        request.headers[.proxyAuthorization] = "Basic p"
        request.headers[HTTPField.Name("X-Sign")!] = "sig"
        request.options.originBoundHeaders = [HTTPField.Name("X-Sign")!]
        #expect(throws: CurlewError.self) { _ = try RedirectPolicy.nextRequest(after: request, status: 307, location: "http://api.example.com/b") }
        do {
            _ = try RedirectPolicy.nextRequest(after: request, status: 307, location: "http://api.example.com/b")
        } catch {
            #expect(error.code == .insecureRedirect)
        }
        // Same host, same path: still a downgrade.
        #expect(throws: CurlewError.self) { _ = try RedirectPolicy.nextRequest(after: request, status: 302, location: "http://api.example.com:443/a") }
        request.options.allowsInsecureRedirects = true
        let next = try RedirectPolicy.nextRequest(after: request, status: 307, location: "http://user:pw@api.example.com/b")
        #expect(next.url == "http://api.example.com/b")
        #expect(next.headers[.authorization] == nil)
        #expect(next.headers[.cookie] == nil)
        #expect(next.headers[.proxyAuthorization] == nil)
        #expect(next.headers[HTTPField.Name("X-Sign")!] == nil)
        #expect(next.method == .post)
        #expect(next.body == Data("b".utf8))
        // An upgrade is fine.
        var plain = request
        plain.options.allowsInsecureRedirects = false
        try plain.setURL("http://api.example.com/a")
        #expect(try RedirectPolicy.nextRequest(after: plain, status: 302, location: "https://api.example.com/a").url == "https://api.example.com/a")
    }

    /// A caller's `Host` names the first origin and is not sent to another; a `Location` without
    /// a host (`https:elsewhere`) is refused, not sent to an empty host.
    @Test func aCrossOriginHopDropsTheCallersHostAndAHostlessLocationIsRefused() throws {
        var request = PreparedRequest(method: .get, url: "https://api.example.com/a")
        request.headers[HTTPField.Name("Host")!] = "api.example.com"
        let sameOrigin = try RedirectPolicy.nextRequest(after: request, status: 302, location: "/b")
        #expect(sameOrigin.headers[HTTPField.Name("Host")!] == "api.example.com")
        let elsewhere = try RedirectPolicy.nextRequest(after: request, status: 302, location: "https://cdn.example.net/b")
        #expect(elsewhere.headers[HTTPField.Name("Host")!] == nil)
        #expect(elsewhere.url == "https://cdn.example.net/b")
        let error = #expect(throws: CurlewError.self) { _ = try RedirectPolicy.nextRequest(after: request, status: 302, location: "https:elsewhere") }
        #expect(error?.code == .redirectRefused)
    }

    /// A 3xx whose `Location` is empty is an answer, not a redirect to itself or a refusal.
    @Test func aRedirectWithAnEmptyLocationIsReturnedAsItIs() async throws {
        try await withLoopback(handler: { _ in
            ServerResponse(status: 302, headers: [("Location", "")], body: Array("no target".utf8))
        }) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.send(FetchText(path: "start")) }
            #expect(error?.code == .unacceptableStatus)
            #expect(error?.status?.code == 302)
            #expect(server.requestCount == 1)
        }
    }
}
