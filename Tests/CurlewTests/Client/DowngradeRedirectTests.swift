import Curlew
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

/// An `https` → `http` redirect from a real TLS server (nginx of
/// `scripts/connection-servers.sh`, `GET /downgrade/<port>` answers `302` to
/// `http://hop-user:hop-password@127.0.0.1:<port>/landing`): refused by default with
/// `.insecureRedirect` and nothing sent over plain HTTP; followed only with
/// ``TransferOptions/allowsInsecureRedirects``, and then without any credential — no
/// `Authorization`, `Cookie`, signature, common argument or user-info reaches the plain server.
@Suite("https → http redirects against nginx", .timeLimit(.minutes(2)))
struct DowngradeRedirectTests {
    /// A call with a cookie of its own; authorisation, common arguments and a signature come from
    /// the client's middleware.
    struct Downgrade: Endpoint {
        typealias Response = String
        var port: Int
        var path: String { "downgrade/\(port)" }
        var headers: [String: String] { ["Cookie": "sid=CANARY-COOKIE"] }
    }

    private func client(_ servers: ConnectionServers, transport: CurlTransport, allowsInsecureRedirects: Bool) -> APIClient {
        var options = TransferOptions()
        options.connection = servers.trustingTestCA
        options.allowsInsecureRedirects = allowsInsecureRedirects
        let middleware: [any APIMiddleware] = [
            AuthorizationMiddleware(store: TokenStore(credential: .init(accessToken: "CANARY-TOKEN"))),
            CommonArgumentsMiddleware(parameters: ["api_key": "CANARY-KEY", "session": "s-1"], headers: ["X-Device": "d1"]),
            SigningMiddleware(secret: "CANARY-SECRET", output: .parameter("sign")),
            SigningMiddleware(secret: "CANARY-SECRET", output: .header(HTTPField.Name("X-Sign")!)),
        ]
        return APIClient(
            configuration: ClientConfiguration(baseURL: servers.tlsURL, transferOptions: options, middleware: middleware),
            transport: transport)
    }

    /// nginx's access log lines for `/downgrade/<port>` (format: connection, port, protocol, request line).
    private func nginxSaw(_ servers: ConnectionServers, port: Int) -> [String] {
        servers.log("access.log").split(separator: "\n").map(String.init).filter { $0.contains("/downgrade/\(port)") }
    }

    @Test func aClientRefusesTheDowngradeByDefault() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        let plain = try await LoopbackServer.start { _ in .text("landed") }
        try await withTransport { transport in
            let client = client(servers, transport: transport, allowsInsecureRedirects: false)
            let error = await #expect(throws: CurlewError.self) { try await client.send(Downgrade(port: plain.port)) }
            #expect(error?.code == .insecureRedirect)
        }
        #expect(plain.requestCount == 0, "nothing was sent over plain HTTP")
        // The credentials went to the https origin, and only there.
        #expect(await eventually { nginxSaw(servers, port: plain.port).count == 1 })
        let line = try #require(nginxSaw(servers, port: plain.port).first)
        #expect(line.contains("api_key=CANARY-KEY") && line.contains("sign="), "\(line)")
        await plain.shutdown()
    }

    @Test func aClientFollowsTheDowngradeOnlyWhenAllowedAndWithoutAnyCredential() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        let plain = try await LoopbackServer.start { _ in .text("landed") }
        try await withTransport { transport in
            let client = client(servers, transport: transport, allowsInsecureRedirects: true)
            let body = try await client.send(Downgrade(port: plain.port))
            #expect(body == "landed")
        }
        let landed = try #require(plain.requests.first)
        #expect(plain.requestCount == 1)
        #expect(landed.method == "GET")
        #expect(landed.path == "/landing")
        #expect(landed.query == nil || landed.query == "", "no common argument or signature: \(landed.uri)")
        for name in ["Authorization", "Cookie", "X-Sign", "X-Device", "Proxy-Authorization"] {
            #expect(landed.header(name) == nil, "\(name) reached the plain server")
        }
        #expect(!landed.headers.contains { $0.value.contains("CANARY") || $0.value.contains("hop-") }, "\(landed.headers)")
        await plain.shutdown()
    }

    /// The same policy for a prepared request sent through the redirect step straight to the
    /// transport (no endpoint), over HTTP/2 and HTTP/1.1.
    @Test(arguments: [TransferOptions.HTTPVersion.automatic, .http1Only])
    func theTransportRefusesOrStripsTheSame(httpVersion: TransferOptions.HTTPVersion) async throws {
        let servers = try ConnectionServers.fromEnvironment()
        let plain = try await LoopbackServer.start { _ in .text("landed") }
        let sign = HTTPField.Name("X-Sign")!
        func request(allowing: Bool) -> PreparedRequest {
            var options = TransferOptions()
            options.connection = servers.trustingTestCA
            options.httpVersion = httpVersion
            options.allowsInsecureRedirects = allowing
            options.originBoundHeaders = [sign]
            var request = PreparedRequest(method: .get, url: servers.tlsURL + "/downgrade/\(plain.port)", options: options)
            request.headers[.authorization] = "Bearer CANARY-TOKEN"
            request.headers[.cookie] = "sid=CANARY-COOKIE"
            request.headers[sign] = "CANARY-SIGNATURE"
            return request
        }
        try await withTransport { transport in
            let error = await #expect(throws: CurlewError.self) { _ = try await followingRedirects(request(allowing: false), over: transport) }
            #expect(error?.code == .insecureRedirect)
            #expect(plain.requestCount == 0, "nothing was sent over plain HTTP")
            let response = try await followingRedirects(request(allowing: true), over: transport)
            #expect(response.status.code == 200)
            #expect(String(decoding: response.body, as: UTF8.self) == "landed")
        }
        let landed = try #require(plain.requests.first)
        #expect(plain.requestCount == 1)
        #expect(landed.path == "/landing")
        for name in ["Authorization", "Cookie", "X-Sign"] {
            #expect(landed.header(name) == nil, "\(name) reached the plain server")
        }
        await plain.shutdown()
    }
}
