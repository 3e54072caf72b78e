@testable import Curlew
@testable import CurlewCore
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
}
