import Curlew
import Foundation
import LoopbackServer
import Testing

/// Cookie jars against the loopback server (host names mapped to 127.0.0.1 by host overrides,
/// so domains can be told apart) and nginx over TLS (`Secure` cookies).
@Suite("Cookie jars", .timeLimit(.minutes(2)))
struct CookieJarTests {
    /// `/set/<name>` answers with fixed `Set-Cookie` headers; every other path echoes `Cookie`.
    static let cookieServer: @Sendable (ServerRequest) async -> ServerResponse = { request in
        let cookies: [String]
        switch request.path {
        case "/set/session": cookies = ["sid=s3ss10n; Path=/"]
        case "/set/scoped": cookies = ["scoped=1; Path=/account"]
        case "/set/domain": cookies = ["wide=1; Domain=curlew.test; Path=/", "host=1; Path=/"]
        case "/set/foreign": cookies = ["foreign=1; Domain=elsewhere.test; Path=/"]
        case "/set/secure": cookies = ["sneaky=1; Secure; Path=/"]
        case "/set/remembered": cookies = ["remember=1; Path=/; Max-Age=3600; HttpOnly"]
        case "/set/logout": cookies = ["sid=; Path=/; Max-Age=0", "remember=; Path=/; Max-Age=0"]
        case "/echo-all": return .text(request.headerValues("Cookie").joined(separator: "|"))
        default: return .text(request.header("Cookie") ?? "")
        }
        var response = ServerResponse.text("set")
        for cookie in cookies { response.headers.append((name: "Set-Cookie", value: cookie)) }
        return response
    }

    private func client(_ server: LoopbackServer, jar: CookieJar?, transport: CurlTransport, hosts: [String] = []) throws -> APIClient {
        var options = ConnectionOptions()
        options.cookies = jar
        options.hostOverrides = try hosts.map { try #require(HostOverride(host: $0, address: "127.0.0.1")) }
        return connectionClient(server.baseURL, options, transport: transport)
    }

    @Test func aJarBelongsToItsClientsCanBeSharedAndIsEmptiedOnLogout() async throws {
        let server = try await LoopbackServer.start(handler: Self.cookieServer)
        try await withTransport { transport in
            let jar = CookieJar()
            let first = try client(server, jar: jar, transport: transport)
            let stranger = try client(server, jar: nil, transport: transport)
            let sibling = try client(server, jar: jar, transport: transport)
            _ = try await first.send(TextGet(path: "set/session"))
            #expect(try await first.send(TextGet(path: "echo")) == "sid=s3ss10n")
            #expect(try await stranger.send(TextGet(path: "echo")) == "", "a client without the jar sends nothing")
            #expect(try await sibling.send(TextGet(path: "echo")) == "sid=s3ss10n", "a client given the same jar shares the session")
            let stored = jar.cookies()
            #expect(stored.map(\.name) == ["sid"])
            #expect(stored.first?.domain == "127.0.0.1")
            #expect(stored.first?.expires == nil)
            #expect(stored.first?.value == "s3ss10n")
            #expect(stored.first.map { !String(describing: $0).contains("s3ss10n") } == true, "descriptions leave values out")

            try jar.removeAll()
            #expect(jar.cookies().isEmpty)
            #expect(try await first.send(TextGet(path: "echo")) == "")
            #expect(try await sibling.send(TextGet(path: "echo")) == "")
        }
        await server.shutdown()
    }

    @Test func cookiesAreScopedByDomainAndPathAndNeverSentCrossSite() async throws {
        let server = try await LoopbackServer.start(handler: Self.cookieServer)
        let port = ConnectionServers.port(of: server.baseURL)
        try await withTransport { transport in
            let jar = CookieJar()
            let client = try client(server, jar: jar, transport: transport, hosts: ["api.curlew.test", "www.curlew.test", "tracker.elsewhere.test"])
            func url(_ host: String, _ path: String) -> String { "http://\(host):\(port)/\(path)" }
            for path in ["set/domain", "set/scoped", "set/foreign"] { _ = try await client.send(TextGet(path: url("api.curlew.test", path))) }

            // Host-only and path-scoped cookies stay with their host and path.
            let sameHost = try await client.send(TextGet(path: url("api.curlew.test", "account/orders")))
            #expect(Set(sameHost.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }) == ["wide=1", "host=1", "scoped=1"])
            #expect(Set(try await client.send(TextGet(path: url("api.curlew.test", "other"))).split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }) == ["wide=1", "host=1"])
            // A Domain cookie reaches the sibling host; the host-only one does not.
            #expect(try await client.send(TextGet(path: url("www.curlew.test", "account/x"))) == "wide=1")
            // Another site gets nothing, not even the cookie that claimed its domain.
            #expect(try await client.send(TextGet(path: url("tracker.elsewhere.test", "account/x"))) == "")
            #expect(!jar.cookies().contains { $0.name == "foreign" })
        }
        await server.shutdown()
    }

    /// A name, not 127.0.0.1: libcurl treats localhost and 127.0.0.1 as secure contexts.
    @Test func secureCookiesTravelOnlyOverHTTPS() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        try await withTransport { transport in
            var options = servers.trustingTestCA
            options.cookies = CookieJar()
            options.hostOverrides = [try #require(HostOverride(host: "www.curlew.test", address: "127.0.0.1"))]
            let jar = try #require(options.cookies)
            let https = connectionClient("https://www.curlew.test:\(ConnectionServers.port(of: servers.tlsURL))", options, transport: transport)
            let http = connectionClient("http://www.curlew.test:\(ConnectionServers.port(of: servers.shortKeepAliveURL))", options, transport: transport)
            _ = try await https.send(TextGet(path: "cookies/set-secure"))
            _ = try await https.send(TextGet(path: "cookies/set-plain"))
            let stored = try #require(jar.cookies().first { $0.name == "tls_token" })
            #expect(stored.isSecure && stored.isHTTPOnly)
            #expect(Set(try await https.send(TextGet(path: "cookies/echo")).split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }) == ["tls_token=t1", "plain=p1"])
            // Same host, plain HTTP: the Secure cookie stays home.
            #expect(try await http.send(TextGet(path: "cookies/echo")) == "plain=p1")
        }
        // And plain HTTP cannot set a Secure cookie.
        let server = try await LoopbackServer.start(handler: Self.cookieServer)
        try await withTransport { transport in
            let jar = CookieJar()
            let port = ConnectionServers.port(of: server.baseURL)
            _ = try await client(server, jar: jar, transport: transport, hosts: ["api.curlew.test"]).send(TextGet(path: "http://api.curlew.test:\(port)/set/secure"))
            #expect(jar.cookies().isEmpty)
        }
        await server.shutdown()
    }

    @Test func aPersistedJarIsPrivateSurvivesTheProcessAndIsEmptiedOnLogout() async throws {
        let server = try await LoopbackServer.start(handler: Self.cookieServer)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-cookies-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("cookies.txt").path
        try await withTransport { transport in
            let jar = try CookieJar(persistingTo: path)
            _ = try await client(server, jar: jar, transport: transport).send(TextGet(path: "set/remembered"))
            // Written after the exchange, 0600, in libcurl's Netscape format.
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
            #expect(try String(contentsOfFile: path, encoding: .utf8).contains("#HttpOnly_127.0.0.1\tFALSE\t/\tFALSE\t"))

            // A new jar (a new process) starts with it.
            let reloaded = try CookieJar(persistingTo: path)
            let stored = try #require(reloaded.cookies().first)
            #expect(stored.name == "remember" && stored.value == "1" && stored.isHTTPOnly)
            #expect((stored.expires?.timeIntervalSinceNow ?? 0) > 3000)
            #expect(try await client(server, jar: reloaded, transport: transport).send(TextGet(path: "echo")) == "remember=1")

            try reloaded.removeAll()
            #expect(try CookieJar(persistingTo: path).cookies().isEmpty)
            #expect(try await client(server, jar: reloaded, transport: transport).send(TextGet(path: "echo")) == "")
        }
        await server.shutdown()
    }

    /// A cookie value need not be UTF-8 (an old server's Latin-1, a file written by curl): the
    /// jar loads such a file, sends the cookie, and writes its bytes back unchanged.
    @Test func aCookieThatIsNotUTF8IsKeptByteForByte() async throws {
        let server = try await LoopbackServer.start(handler: Self.cookieServer)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-cookies-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("cookies.txt").path
        let latin: [UInt8] = Array("127.0.0.1\tFALSE\t/\tFALSE\t0\tlatin\tcaf".utf8) + [0xE9]
        try Data(Array("# Netscape HTTP Cookie File\n".utf8) + latin + [0x0A]).write(to: URL(fileURLWithPath: path))
        try await withTransport { transport in
            let jar = try CookieJar(persistingTo: path)
            #expect(jar.cookies().map(\.name) == ["latin"])
            let client = try client(server, jar: jar, transport: transport)
            #expect(try await client.send(TextGet(path: "echo")).hasPrefix("latin=caf"))
            _ = try await client.send(TextGet(path: "set/session"))
            let written = try Data(contentsOf: URL(fileURLWithPath: path))
            #expect(written.range(of: Data(latin + [0x0A])) != nil, "the Latin-1 byte is written back as it was")
            #expect(written.range(of: Data("\tsid\ts3ss10n\n".utf8)) != nil)
            #expect(try CookieJar(persistingTo: path).cookies().map(\.name).sorted() == ["latin", "sid"])
        }
        await server.shutdown()
    }

    @Test func aCookieFileThatIsNotARegularFileIsRefused() throws {
        #expect(throws: CurlewError.self) { try CookieJar(persistingTo: "/") }
        do {
            _ = try CookieJar(persistingTo: FileManager.default.temporaryDirectory.path)
        } catch {
            #expect(error.code == .fileUnreadable)
        }
    }

    /// A request's own `Cookie` header and the jar's cookies go out as one `Cookie` line (HTTP/1.1
    /// allows one, RFC 6265 §5.4): libcurl writes the jar's line, and the request's cookies join it.
    @Test func aRequestsOwnCookieJoinsTheJarsLine() async throws {
        struct WithCookie: Endpoint {
            typealias Response = String
            var path: String { "echo-all" }
            var headers: [String: String] { ["Cookie": "csrf=1"] }
        }
        let server = try await LoopbackServer.start(handler: Self.cookieServer)
        try await withTransport { transport in
            let jar = CookieJar()
            let client = try client(server, jar: jar, transport: transport)
            #expect(try await client.send(WithCookie()) == "csrf=1", "without jar cookies the request's own line")
            _ = try await client.send(TextGet(path: "set/session"))
            #expect(try await client.send(WithCookie()) == "sid=s3ss10n; csrf=1")
            #expect(try await client.send(TextGet(path: "echo-all")) == "sid=s3ss10n", "the next request carries no leftover cookie")
            #expect(try await self.client(server, jar: nil, transport: transport).send(WithCookie()) == "csrf=1")
        }
        await server.shutdown()
    }

    /// A cookie the server deletes (`Max-Age=0`) leaves the jar's list and its file at once,
    /// not only after the next request.
    @Test func aDeletedCookieLeavesTheJarAndItsFile() async throws {
        let server = try await LoopbackServer.start(handler: Self.cookieServer)
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-cookies-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("cookies.txt").path
        try await withTransport { transport in
            let jar = try CookieJar(persistingTo: path)
            let client = try client(server, jar: jar, transport: transport)
            _ = try await client.send(TextGet(path: "set/session"))
            _ = try await client.send(TextGet(path: "set/remembered"))
            #expect(Set(jar.cookies().map(\.name)) == ["sid", "remember"])
            _ = try await client.send(TextGet(path: "set/logout"))
            #expect(jar.cookies().isEmpty)
            #expect(try CookieJar(persistingTo: path).cookies().isEmpty)
            #expect(try !String(contentsOfFile: path, encoding: .utf8).contains("remember"))
        }
        await server.shutdown()
    }
}
