@testable import Curlew
@testable import CurlewCore
import LoopbackServer
import Testing

/// `RequestTarget.split`: what libcurl parses and what it sends as the request target.
@Suite("Request target split")
struct RequestTargetTests {
    @Test func aURLWithAQueryIsSplitAtTheQuery() {
        #expect(RequestTarget.split("http://127.0.0.1:8080/a/b?x=1&y=%20") == RequestTarget(url: "http://127.0.0.1:8080/a/b", target: "/a/b?x=1&y=%20"))
        #expect(RequestTarget.split("https://user:pw@host/p?q") == RequestTarget(url: "https://user:pw@host/p", target: "/p?q"))
    }

    @Test func anEmptyPathIsSentAsASlash() {
        #expect(RequestTarget.split("http://host?x=1") == RequestTarget(url: "http://host", target: "/?x=1"))
        #expect(RequestTarget.split("http://host:81?") == RequestTarget(url: "http://host:81", target: "/?"))
    }

    @Test func theFragmentIsNeverSent() {
        #expect(RequestTarget.split("http://host/p?x=1#frag?y") == RequestTarget(url: "http://host/p", target: "/p?x=1"))
    }

    @Test func urlsWithoutAQueryAreLeftToLibcurl() {
        #expect(RequestTarget.split("http://host/p") == nil)
        #expect(RequestTarget.split("http://host/p#frag?notAQuery") == nil)
        #expect(RequestTarget.split("ftp://host/p?x") == nil)
        #expect(RequestTarget.split("") == nil)
    }

    @Test func onlyOriginFormRequestLinesUseATarget() {
        #expect(ProxyConfiguration.direct.sendsOriginForm(https: false))
        #expect(!ProxyConfiguration.environment.sendsOriginForm(https: true))
        let http = ProxyConfiguration.http(host: "127.0.0.1", port: 3128)
        #expect(!http.sendsOriginForm(https: false), "a forwarding proxy needs the whole URL")
        #expect(http.sendsOriginForm(https: true), "a CONNECT tunnel carries origin form")
        #expect(ProxyConfiguration.socks5(host: "127.0.0.1", port: 1080).sendsOriginForm(https: false))
    }

    /// The target goes into the request line as it is, so one with a space or a control
    /// character is never split: libcurl checks the whole URL and refuses it.
    @Test func aTargetWithASpaceOrControlCharacterIsLeftToLibcurl() {
        #expect(RequestTarget.split("http://host/a?x=1\r\nX-Injected: yes") == nil)
        #expect(RequestTarget.split("http://host/a b?x=1") == nil)
        #expect(RequestTarget.split("http://host/a?x=\u{0}") == nil)
        #expect(RequestTarget.split("http://host/a?x=1#frag with space") == RequestTarget(url: "http://host/a", target: "/a?x=1"))
    }

    /// A URL with CR LF in its query, given straight to the transport, fails with
    /// `.malformedURL`: nothing reaches the server, no injected header line.
    @Test func aQueryWithCRLFIsNeverSent() async throws {
        let server = try await LoopbackServer.start { _ in .text("ok") }
        defer { Task { await server.shutdown() } }
        let transport = CurlTransport()
        let error = await #expect(throws: CurlewError.self) {
            _ = try await transport.send(PreparedRequest(method: .get, url: server.baseURL + "/a?x=1\r\nX-Injected: yes"))
        }
        #expect(error?.code == .malformedURL, "\(String(describing: error))")
        #expect(server.requestCount == 0)
        await transport.shutdown()
    }

    /// The path reaches the server as the request built it, with or without a query: libcurl
    /// does not remove `.` or `..` segments, literal or percent-encoded (a `@Path` value of
    /// `..` is `%2E%2E`, which libcurl 8.13 and later would otherwise resolve).
    @Test func dotSegmentsAreSentAsTheyAreWithOrWithoutAQuery() async throws {
        let server = try await LoopbackServer.start { _ in .text("ok") }
        defer { Task { await server.shutdown() } }
        let transport = CurlTransport()
        for path in ["/a/../b", "/a/./b?x=1", "/albums/%2E%2E/pictures", "/albums/%2E%2E/pictures?x=1"] {
            _ = try await transport.send(PreparedRequest(method: .get, url: server.baseURL + path))
        }
        #expect(server.requests.map(\.uri) == ["/a/../b", "/a/./b?x=1", "/albums/%2E%2E/pictures", "/albums/%2E%2E/pictures?x=1"])
        await transport.shutdown()
    }
}
