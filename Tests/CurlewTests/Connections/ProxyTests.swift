import Curlew
import Foundation
import Testing

/// Through real proxies on 127.0.0.1: tinyproxy (HTTP forwarding and `CONNECT`, basic
/// authentication) and microsocks (SOCKS5 with username and password), both logging what they
/// serve; nginx's `/via` echoes the `Via` header a forwarding proxy adds.
@Suite("Proxies", .serialized, .timeLimit(.minutes(2)))
struct ProxyTests {
    private func viaProxy(_ servers: ConnectionServers, _ proxy: ProxyConfiguration) -> ConnectionOptions {
        var options = servers.trustingTestCA
        options.proxy = proxy
        return options
    }

    private func httpProxy(_ servers: ConnectionServers, password: String? = nil, excluding: [String] = []) -> ProxyConfiguration {
        .http(host: servers.httpProxy.host, port: servers.httpProxy.port, username: servers.proxyUser, password: password ?? servers.proxyPassword, excluding: excluding)
    }

    @Test func httpsGoesThroughAnAuthenticatedConnectTunnel() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        let port = ConnectionServers.port(of: servers.tlsURL)
        try await withTransport { transport in
            let client = connectionClient(servers.tlsURL, viaProxy(servers, httpProxy(servers)), transport: transport)
            let response = try await client.response(for: ConnectionProbe())
            // TLS end to end through the tunnel: HTTP/2 with nginx, verified.
            #expect(ProbeAnswer(response.value).protocolName == "HTTP/2.0")
            #expect(servers.log("tinyproxy.log").contains("CONNECT 127.0.0.1:\(port) "))
        }
    }

    @Test func httpIsForwardedByTheProxy() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        try await withTransport { transport in
            let client = connectionClient(servers.shortKeepAliveURL, viaProxy(servers, httpProxy(servers)), transport: transport)
            let via = try await client.send(TextGet(path: "via"))
            #expect(via.contains("tinyproxy"))
        }
    }

    @Test func aRefusedProxyIsAProxyFailure() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        try await withTransport { transport in
            let wrongPassword = connectionClient(servers.tlsURL, viaProxy(servers, httpProxy(servers, password: "wrong")), transport: transport)
            #expect(await curlewCode { try await wrongPassword.send(ConnectionProbe()) } == .proxyFailure)
            let socks = ProxyConfiguration.socks5(host: servers.socksProxy.host, port: servers.socksProxy.port, username: servers.proxyUser, password: "wrong")
            #expect(await curlewCode { try await connectionClient(servers.tlsURL, viaProxy(servers, socks), transport: transport).send(ConnectionProbe()) } == .proxyFailure)
        }
    }

    /// A tunnel is authenticated when it opens: a request with other proxy credentials, or none,
    /// never rides one that other credentials opened (libcurl compares them before it reuses a
    /// tunnel), and the first tunnel still carries its own requests over HTTP/2 afterwards.
    @Test func aTunnelIsNeverReusedWithOtherProxyCredentials() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        try await withTransport(configuration: .init(engineCount: 1)) { transport in
            let owner = connectionClient(servers.tlsURL, viaProxy(servers, httpProxy(servers)), transport: transport)
            _ = try await owner.send(ConnectionProbe())
            let anonymous = ProxyConfiguration.http(host: servers.httpProxy.host, port: servers.httpProxy.port)
            #expect(await curlewCode { try await connectionClient(servers.tlsURL, viaProxy(servers, anonymous), transport: transport).send(ConnectionProbe()) } == .proxyFailure)
            let wrong = connectionClient(servers.tlsURL, viaProxy(servers, httpProxy(servers, password: "wrong")), transport: transport)
            #expect(await curlewCode { try await wrong.send(ConnectionProbe()) } == .proxyFailure)
            let again = try await owner.response(for: ConnectionProbe())
            #expect(ProbeAnswer(again.value).protocolName == "HTTP/2.0")
            #expect(again.metrics?.reusedConnection == true)
        }
    }

    /// An http URL is forwarded, so the proxy's refusal arrives as a response: a 407 used to
    /// reach the caller as the origin's `.unacceptableStatus` (and a middleware could take it for
    /// the upstream's answer); it is a `.proxyFailure`, like a refused `CONNECT`.
    @Test func aForwardingProxyThatWantsCredentialsIsAProxyFailure() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        try await withTransport { transport in
            let anonymous = ProxyConfiguration.http(host: servers.httpProxy.host, port: servers.httpProxy.port)
            let client = connectionClient(servers.shortKeepAliveURL, viaProxy(servers, anonymous), transport: transport)
            let error = try await #require(throws: CurlewError.self) { try await client.send(TextGet(path: "via")) }
            #expect(error.code == .proxyFailure)
            #expect(error.message == "the proxy answered with status 407 (Proxy Authentication Required): its username or password is missing or wrong")
            #expect(error.status == nil)
            #expect(error.transportPhase == .receive)
            // With the credentials the same request is forwarded.
            #expect(try await connectionClient(servers.shortKeepAliveURL, viaProxy(servers, httpProxy(servers)), transport: transport).send(TextGet(path: "via")).contains("tinyproxy"))
        }
    }

    @Test func socks5WithCredentialsCarriesTheConnection() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        let port = ConnectionServers.port(of: servers.tlsURL)
        try await withTransport { transport in
            let socks = ProxyConfiguration.socks5(host: servers.socksProxy.host, port: servers.socksProxy.port, username: servers.proxyUser, password: servers.proxyPassword)
            let answer = try await connectionClient(servers.tlsURL, viaProxy(servers, socks), transport: transport).send(ConnectionProbe())
            #expect(ProbeAnswer(answer).protocolName == "HTTP/2.0")
            #expect(servers.log("microsocks.log").contains("connected to 127.0.0.1:\(port)"))
        }
    }

    @Test func hostsInTheNoProxyListAreReachedDirectly() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        try await withTransport { transport in
            let client = connectionClient(servers.shortKeepAliveURL, viaProxy(servers, httpProxy(servers, excluding: ["localhost", "127.0.0.1"])), transport: transport)
            let via = try await client.send(TextGet(path: "via"))
            #expect(via == "")
        }
    }

    /// libcurl reads `http_proxy` on its own; Curlew ignores it unless the client opts in.
    /// The variables are set for this process during the test only, with `no_proxy=127.0.0.1`
    /// so that the curl command other suites run against 127.0.0.1 meanwhile stays direct; this
    /// test goes to `localhost`, which the proxy resolves.
    @Test func theEnvironmentsProxyIsIgnoredUnlessChosen() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        let proxyURL = "http://\(servers.proxyUser):\(servers.proxyPassword)@\(servers.httpProxy.host):\(servers.httpProxy.port)"
        let names: [String] = ["http_proxy", "no_proxy"]
        let saved = names.map { name in (name, getenv(name).map { String(cString: $0) }) }
        setenv("no_proxy", "127.0.0.1", 1)
        setenv("http_proxy", proxyURL, 1)
        defer {
            for (name, value) in saved {
                if let value { setenv(name, value, 1) } else { unsetenv(name) }
            }
        }
        let url = "http://localhost:\(ConnectionServers.port(of: servers.shortKeepAliveURL))"
        try await withTransport { transport in
            let direct = try await connectionClient(url, ConnectionOptions(), transport: transport).send(TextGet(path: "via"))
            #expect(direct == "")
            var optedIn = ConnectionOptions()
            optedIn.proxy = .environment
            let proxied = try await connectionClient(url, optedIn, transport: transport).send(TextGet(path: "via"))
            #expect(proxied.contains("tinyproxy"))
        }
    }

    /// `.environment` documents upper-case `HTTPS_PROXY` for https URLs (libcurl reads it when
    /// `https_proxy` is unset): the request goes through a `CONNECT` tunnel to `localhost`, while
    /// `no_proxy=127.0.0.1` keeps other suites' curl commands to 127.0.0.1 direct.
    @Test func upperCaseHTTPSProxyFromTheEnvironmentIsUsedForHTTPS() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        let proxyURL = "http://\(servers.proxyUser):\(servers.proxyPassword)@\(servers.httpProxy.host):\(servers.httpProxy.port)"
        let names: [String] = ["HTTPS_PROXY", "https_proxy", "no_proxy"]
        let saved = names.map { name in (name, getenv(name).map { String(cString: $0) }) }
        unsetenv("https_proxy")
        setenv("no_proxy", "127.0.0.1", 1)
        setenv("HTTPS_PROXY", proxyURL, 1)
        defer {
            for (name, value) in saved {
                if let value { setenv(name, value, 1) } else { unsetenv(name) }
            }
        }
        let port = ConnectionServers.port(of: servers.tlsURL)
        let tunnel = "CONNECT localhost:\(port) "
        let before = servers.log("tinyproxy.log").components(separatedBy: tunnel).count
        try await withTransport { transport in
            var options = servers.trustingTestCA
            options.proxy = .environment
            let answer = try await connectionClient("https://localhost:\(port)", options, transport: transport).send(ConnectionProbe())
            #expect(ProbeAnswer(answer).protocolName == "HTTP/2.0")
        }
        #expect(servers.log("tinyproxy.log").components(separatedBy: tunnel).count == before + 1)
    }

    @Test func anInvalidProxyIsRefusedBeforeAnythingIsSent() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        try await withTransport { transport in
            for proxy in [
                ProxyConfiguration.http(host: "proxy.test", port: 0), .http(host: "bad host", port: 8080),
                .socks5(host: "proxy.test", port: 1080, excluding: ["a,b"]),
            ] {
                let code = await curlewCode { try await connectionClient(servers.tlsURL, viaProxy(servers, proxy), transport: transport).send(ConnectionProbe()) }
                #expect(code == .invalidConnectionSettings, "\(proxy)")
            }
        }
    }

    @Test func descriptionsNeverShowTheProxyPassword() {
        let proxy = ProxyConfiguration.http(host: "proxy.test", port: 3128, username: "me", password: "hunter2")
        var dumped = ""
        dump(proxy, to: &dumped)
        #expect(proxy.description == "http://me:***@proxy.test:3128")
        #expect(!dumped.contains("hunter2"))
        #expect(ProxyConfiguration.direct.description == "direct")
    }
}
