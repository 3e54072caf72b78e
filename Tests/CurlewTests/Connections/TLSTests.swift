import Curlew
import Foundation
import Testing

/// HTTPS and HTTP/2 against nginx (`scripts/connection-servers.sh`): ALPN, multiplexing, forced
/// HTTP/1.1, certificate failures with their own codes, custom trust roots, and the isolation of
/// insecure connections in the pool.
@Suite("TLS and HTTP/2 against nginx", .timeLimit(.minutes(2)))
struct TLSTests {
    @Test func http2IsNegotiatedByALPNAndReportedOnTheResponse() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        try await withTransport { transport in
            let client = connectionClient(servers.tlsURL, servers.trustingTestCA, transport: transport)
            let response = try await client.response(for: ConnectionProbe())
            #expect(ProbeAnswer(response.value).protocolName == "HTTP/2.0")
            let metrics = try #require(response.metrics)
            #expect(metrics.httpVersion == "2")
            #expect(metrics.tlsHandshake > .zero)
            #expect(metrics.reusedConnection == false)
        }
    }

    @Test func fortyConcurrentRequestsAreMultiplexedOverOneConnection() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        // One engine: connections belong to an engine (see the next test for several).
        try await withTransport(configuration: .init(engineCount: 1)) { transport in
            let client = connectionClient(servers.tlsURL, servers.trustingTestCA, transport: transport)
            let answers = try await withThrowingTaskGroup(of: ProbeAnswer.self) { group in
                for _ in 0..<40 { group.addTask { ProbeAnswer(try await client.send(ConnectionProbe())) } }
                return try await group.reduce(into: [ProbeAnswer]()) { $0.append($1) }
            }
            #expect(answers.count == 40)
            #expect(Set(answers.map(\.protocolName)) == ["HTTP/2.0"])
            // nginx numbers its connections: every request came on the same one.
            #expect(Set(answers.map(\.connection)).count == 1)
        }
    }

    @Test func eachEngineMultiplexesOverItsOwnConnection() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        try await withTransport(configuration: .init(engineCount: 2)) { transport in
            let client = connectionClient(servers.tlsURL, servers.trustingTestCA, transport: transport)
            // Two tasks, one on each engine (the executor hands out the engines in turn), each
            // sending 20 requests at once from child tasks that stay on its engine.
            let answers = try await withThrowingTaskGroup(of: [ProbeAnswer].self) { engines in
                for _ in 0..<2 {
                    engines.addTask(executorPreference: transport.executor) {
                        try await withThrowingTaskGroup(of: ProbeAnswer.self) { group in
                            for _ in 0..<20 { group.addTask { ProbeAnswer(try await client.send(ConnectionProbe())) } }
                            return try await group.reduce(into: [ProbeAnswer]()) { $0.append($1) }
                        }
                    }
                }
                return try await engines.reduce(into: [ProbeAnswer]()) { $0 += $1 }
            }
            #expect(answers.count == 40)
            #expect(Set(answers.map(\.protocolName)) == ["HTTP/2.0"])
            #expect(Set(answers.map(\.connection)).count == 2)
        }
    }

    @Test func http1IsUsedWhenForced() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        try await withTransport { transport in
            let client = connectionClient(servers.tlsURL, servers.trustingTestCA, transport: transport, httpVersion: .http1Only)
            let first = try await client.response(for: ConnectionProbe())
            let second = try await client.response(for: ConnectionProbe())
            #expect(ProbeAnswer(first.value).protocolName == "HTTP/1.1")
            #expect(first.metrics?.httpVersion == "1.1")
            // Kept alive: the second request reused the connection.
            #expect(ProbeAnswer(second.value).connection == ProbeAnswer(first.value).connection)
            #expect(second.metrics?.reusedConnection == true)
        }
    }

    @Test func eachCertificateFailureHasItsOwnCode() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        try await withTransport { transport in
            func code(_ url: String, _ options: ConnectionOptions) async -> CurlewError.Code? {
                await curlewCode { try await connectionClient(url, options, transport: transport).send(ConnectionProbe()) }
            }
            // The CA is trusted: only what is wrong with each certificate is left.
            #expect(await code(servers.wrongHostURL, servers.trustingTestCA) == .tlsHostnameMismatch)
            #expect(await code(servers.expiredURL, servers.trustingTestCA) == .tlsCertificateExpired)
            #expect(await code(servers.selfSignedURL, servers.trustingTestCA) == .tlsCertificateUntrusted)
            // The system's roots do not know the test CA.
            #expect(await code(servers.tlsURL, ConnectionOptions()) == .tlsCertificateUntrusted)
            #expect(CurlewError.Code.tlsHostnameMismatch.level == .transport)
        }
    }

    /// libcurl's message says what was wrong; the error also says what to do about it.
    @Test func eachCertificateFailureSaysWhatToDo() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        try await withTransport { transport in
            func message(_ url: String, _ options: ConnectionOptions) async -> String? {
                do {
                    _ = try await connectionClient(url, options, transport: transport).send(ConnectionProbe())
                    return nil
                } catch {
                    return (error as? CurlewError)?.message
                }
            }
            var pinned = servers.trustingTestCA
            pinned.tls.pinnedPublicKeys = [try servers.pin("self-signed.pin")]
            var unusableKey = servers.trustingTestCA
            unusableKey.tls.clientCertificate = .files(certificate: servers.path("client.pem"), privateKey: servers.path("client-encrypted.key"))
            #expect(
                await message(servers.tlsURL, ConnectionOptions())
                    == "SSL certificate problem: unable to get local issuer certificate; the server's certificate does not chain to a trusted root: trust its issuer with TLSOptions.trustRoots (.file or .pem)")
            #expect(
                await message(servers.expiredURL, servers.trustingTestCA)
                    == "SSL certificate problem: certificate has expired; the server's certificate is outside its validity period: renew it on the server, or check this machine's clock")
            #expect(
                await message(servers.wrongHostURL, servers.trustingTestCA)
                    == "SSL: no alternative certificate subject name matches target host name '127.0.0.1'; the server's certificate is not valid for the URL's host name: use a name it was issued for (a HostOverride reaches another address under that name)"
            )
            #expect(
                await message(servers.tlsURL, pinned)
                    == "SSL: public key does not match pinned public key; the server's public key is none of TLSOptions.pinnedPublicKeys: after a key rotation, list the new key's pin too")
            #expect(
                await message(servers.mutualTLSURL, unusableKey)
                    == "unable to set private key file: '\(servers.path("client-encrypted.key"))' type PEM; check TLSOptions.clientCertificate: PEM files that exist, a key that matches the certificate, and the key's password")
        }
    }

    @Test func theTestCAAsTrustRootFromAFileOrInMemoryMakesVerificationPass() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        try await withTransport { transport in
            #expect(try await connectionClient(servers.tlsURL, servers.trustingTestCA, transport: transport).send(ConnectionProbe()).hasSuffix("HTTP/2.0"))
            var inMemory = ConnectionOptions()
            inMemory.tls.trustRoots = .pem(try servers.contents("ca.pem"))
            #expect(try await connectionClient(servers.tlsURL, inMemory, transport: transport).send(ConnectionProbe()).hasSuffix("HTTP/2.0"))
            // A self-signed server passes when its own certificate is the root.
            var selfSigned = ConnectionOptions()
            selfSigned.tls.trustRoots = .pem(try servers.contents("self-signed.pem"))
            #expect(try await connectionClient(servers.selfSignedURL, selfSigned, transport: transport).send(ConnectionProbe()).hasSuffix("HTTP/2.0"))
            // Custom roots replace the system's: the test CA does not vouch for the self-signed one.
            #expect(await curlewCode { try await connectionClient(servers.tlsURL, selfSigned, transport: transport).send(ConnectionProbe()) } == .tlsCertificateUntrusted)
        }
    }

    @Test func anInsecureConnectionIsNeverReusedByAVerifyingRequest() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        try await withTransport { transport in
            var insecure = servers.trustingTestCA
            insecure.tls.verifiesPeer = false
            // The wrong-host server: accepted without verification, refused with it, although the
            // insecure connection to that very origin sits in the pool.
            let unverified = connectionClient(servers.wrongHostURL, insecure, transport: transport)
            let verified = connectionClient(servers.wrongHostURL, servers.trustingTestCA, transport: transport)
            let first = ProbeAnswer(try await unverified.send(ConnectionProbe()))
            #expect(await curlewCode { try await verified.send(ConnectionProbe()) } == .tlsHostnameMismatch)
            let again = ProbeAnswer(try await unverified.send(ConnectionProbe()))
            #expect(again.connection == first.connection, "the insecure connection stayed pooled")

            // The good server: the verifying request opens its own connection (nginx counts a new
            // one) and then reuses it, never the insecure one.
            let loose = ProbeAnswer(try await connectionClient(servers.tlsURL, insecure, transport: transport).send(ConnectionProbe()))
            let strictClient = connectionClient(servers.tlsURL, servers.trustingTestCA, transport: transport)
            let strict = ProbeAnswer(try await strictClient.send(ConnectionProbe()))
            let strictAgain = ProbeAnswer(try await strictClient.send(ConnectionProbe()))
            #expect(strict.connection != loose.connection)
            #expect(strictAgain.connection == strict.connection)
        }
    }
}
