@testable import Curlew
@testable import CurlewCore
import HTTPTypes
import Foundation
import LoopbackServer
import Testing
import TestSupport

/// Per-request speed limits and host overrides.
@Suite("Speed limits and host overrides", .timeLimit(.minutes(2)))
struct SpeedAndHostOverrideTests {
    struct Bytes: Endpoint {
        typealias Response = Data
        var path: String
    }

    struct Upload: Endpoint {
        typealias Response = String
        var bytes: Data
        var method: HTTPRequest.Method { .post }
        var path: String { "upload" }
        var body: RequestPayload? { .data(bytes, contentType: "application/octet-stream") }
    }

    @Test func aDownloadIsHeldToItsSpeedLimit() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        try await withTransport { transport in
            let client = connectionClient(servers.shortKeepAliveURL, ConnectionOptions(), transport: transport)
            let clock = ContinuousClock()
            let start = clock.now
            // 12 MiB at 8 MiB/s: about 1.5 s. libcurl averages over the transfer and reads what
            // the socket already holds in one go, so the first few MiB on loopback arrive at once;
            // the bound leaves room for that.
            let body = try await client.send(Bytes(path: "12m.bin")) {
                $0.maximumReceiveSpeed = 8 * 1024 * 1024
                $0.maximumBodySize = 32 * 1024 * 1024
            }
            let elapsed = clock.now - start
            #expect(body.count == 12 * 1024 * 1024)
            #expect(elapsed >= .milliseconds(600), "took \(elapsed)")
        }
    }

    @Test func anUploadIsHeldToItsSpeedLimit() async throws {
        try await withLoopback(handler: { request in .text("\(request.body.count)") }) { server, client, _ in
            let clock = ContinuousClock()
            let start = clock.now
            let answer = try await client.send(Upload(bytes: Data(repeating: 0x5A, count: 256 * 1024))) { $0.maximumSendSpeed = 512 * 1024 }
            let elapsed = clock.now - start
            #expect(answer == "\(256 * 1024)")
            #expect(elapsed >= .milliseconds(350), "took \(elapsed)")
        }
    }

    @Test func aSpeedLimitMustBePositiveAndNothingIsSentOtherwise() async throws {
        try await withLoopback(handler: { _ in .text("ok") }) { server, client, _ in
            let code = await curlewCode { try await client.send(Numbered(index: 1)) { $0.maximumReceiveSpeed = 0 } }
            #expect(code == .invalidConnectionSettings)
            #expect(server.requestCount == 0)
        }
    }

    @Test func aHostOverrideReachesTheServerAndTLSStillVerifiesTheName() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        let port = ConnectionServers.port(of: servers.tlsURL)
        try await withTransport { transport in
            let client = connectionClient("https://api.curlew.test:\(port)", servers.trustingTestCA, transport: transport)
            let override = try #require(HostOverride(host: "api.curlew.test", port: port, address: "127.0.0.1"))
            let answer = try await client.send(ConnectionProbe()) { $0.hostOverrides = [override] }
            #expect(ProbeAnswer(answer).protocolName == "HTTP/2.0")
            // A name the certificate does not carry is still refused.
            let elsewhere = connectionClient("https://api.elsewhere.test:\(port)", servers.trustingTestCA, transport: transport)
            let wrongName = try #require(HostOverride(host: "api.elsewhere.test", address: "127.0.0.1"))
            #expect(await curlewCode { try await elsewhere.send(ConnectionProbe()) { $0.hostOverrides = [wrongName] } } == .tlsHostnameMismatch)
        }
    }

    @Test func aHostOverrideIsCheckedWhenMade() {
        #expect(HostOverride(host: "api.test", address: "127.0.0.1")?.connectToLine == "api.test::127.0.0.1:")
        #expect(HostOverride(host: "api.test", port: 443, address: "::1")?.connectToLine == "api.test:443:[::1]:")
        #expect(HostOverride(host: "api.test:443", address: "127.0.0.1") == nil)
        #expect(HostOverride(host: "api.test", port: 0, address: "127.0.0.1") == nil)
        #expect(HostOverride(host: "", address: "127.0.0.1") == nil)
        #expect(HostOverride(host: "api.test", address: "127.0.0.1\r\nX: y") == nil)
    }
}
