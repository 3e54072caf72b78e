import Curlew
import Foundation
import HTTPTypes
import Testing

/// `GET /target?…` with its query items; nginx answers `"$request_uri $server_protocol"`.
private struct TargetProbe: Endpoint {
    typealias Response = String
    var path = "target"
    var items: [URLQueryItem] = []
    var query: [URLQueryItem] { items }
}

/// The request target as the server saw it, over each way a request line is written: libcurl is
/// given `CURLOPT_REQUEST_TARGET` for origin-form requests with a query, and the whole URL when a
/// proxy forwards the request.
@Suite("Request target on the wire")
struct RequestTargetServerTests {
    private let items = [URLQueryItem(name: "b", value: "2"), URLQueryItem(name: "a", value: "x y/?")]

    /// The path and query of an absolute URL, as the request line carries them.
    private func target(of url: String) -> String {
        guard let scheme = url.range(of: "://"), let slash = url[scheme.upperBound...].firstIndex(of: "/") else { return "" }
        return String(url[slash...])
    }

    @Test func theWholeQueryArrivesOverHTTP2AndHTTP11() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        try await withTransport { transport in
            let h2 = try await connectionClient(servers.tlsURL, servers.trustingTestCA, transport: transport).response(for: TargetProbe(items: items))
            #expect(h2.url.contains("/target?b=2&a=x"))
            #expect(h2.value == target(of: h2.url) + " HTTP/2.0")
            let h1 = try await connectionClient(servers.shortKeepAliveURL, servers.trustingTestCA, transport: transport).response(for: TargetProbe(items: items))
            #expect(h1.url.hasPrefix(servers.shortKeepAliveURL))
            #expect(h1.value == target(of: h1.url) + " HTTP/1.1")
        }
    }

    @Test func aHandleThatSentATargetSendsThePlainPathNext() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        try await withTransport { transport in
            // One client, one request at a time: the pooled handle goes from a target to none
            // and back.
            let client = connectionClient(servers.shortKeepAliveURL, servers.trustingTestCA, transport: transport)
            let first = try await client.response(for: TargetProbe(items: items))
            let plain = try await client.send(TargetProbe())
            let again = try await client.response(for: TargetProbe(items: [URLQueryItem(name: "n", value: "3")]))
            #expect(first.value == target(of: first.url) + " HTTP/1.1")
            #expect(plain == "/target HTTP/1.1")
            #expect(again.value == "/target?n=3 HTTP/1.1")
            #expect(again.url == servers.shortKeepAliveURL + "/target?n=3" || again.url == servers.shortKeepAliveURL + "target?n=3")
        }
    }

    @Test func aForwardingProxyGetsTheWholeURLWithItsQuery() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        var options = servers.trustingTestCA
        options.proxy = .http(host: servers.httpProxy.host, port: servers.httpProxy.port, username: servers.proxyUser, password: servers.proxyPassword)
        try await withTransport { transport in
            let response = try await connectionClient(servers.shortKeepAliveURL, options, transport: transport)
                .response(for: TargetProbe(items: [URLQueryItem(name: "via", value: "proxy")]))
            #expect(response.value == "/target?via=proxy HTTP/1.1")
            let port = ConnectionServers.port(of: servers.shortKeepAliveURL)
            #expect(servers.log("tinyproxy.log").contains("GET http://127.0.0.1:\(port)/target?via=proxy HTTP/1.1"))
        }
    }
}
