@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import TestSupport
import Testing

/// The README's cookie promises against httpbin, whose `/cookies/set` answers `302` with
/// `Set-Cookie` and whose `/cookies` echoes the `Cookie` it received. These tests fail, not skip,
/// without `CURLEW_HTTPBIN_URL`.
@Suite("Cookies against httpbin", .timeLimit(.minutes(1)))
struct HTTPBinCookieTests {
    struct Cookies: Decodable { var cookies: [String: String] }

    struct CookieCall: Endpoint {
        typealias Response = Cookies
        var path: String
        var query: [URLQueryItem] = []
    }

    private func client(jar: CookieJar?) throws -> APIClient {
        var options = TransferOptions()
        options.connection.cookies = jar
        return APIClient(configuration: ClientConfiguration(baseURL: try TestServers.httpbin(), transferOptions: options), transport: CurlTransport.shared)
    }

    @Test func aJarKeepsCookiesSetOnARedirectSharesThemAndForgetsThemOnRemoveAll() async throws {
        let jar = CookieJar()
        let first = try client(jar: jar)
        // Set on the 302, sent on the hop it redirects to.
        let set = try await first.send(CookieCall(path: "cookies/set", query: [URLQueryItem(name: "session", value: "abc 123"), URLQueryItem(name: "theme", value: "dark")]))
        #expect(set.cookies == ["session": "abc 123", "theme": "dark"])
        #expect(Set(jar.cookies().map(\.name)) == ["session", "theme"])

        // Another client given the same jar shares the session.
        let second = try client(jar: jar)
        #expect(try await second.send(CookieCall(path: "cookies")).cookies == ["session": "abc 123", "theme": "dark"])

        // The server deletes one; the jar follows.
        let deleted = try await second.send(CookieCall(path: "cookies/delete", query: [URLQueryItem(name: "theme", value: nil)]))
        #expect(deleted.cookies == ["session": "abc 123"])
        #expect(jar.cookies().map(\.name) == ["session"])

        try jar.removeAll()
        #expect(try await first.send(CookieCall(path: "cookies")).cookies == [:])
    }

    /// Without a jar nothing is kept: not even across the redirect of the same call.
    @Test func withoutAJarNoCookieIsKept() async throws {
        let client = try client(jar: nil)
        let set = try await client.send(CookieCall(path: "cookies/set", query: [URLQueryItem(name: "session", value: "abc")]))
        #expect(set.cookies == [:])
        #expect(try await client.send(CookieCall(path: "cookies")).cookies == [:])
    }
}
