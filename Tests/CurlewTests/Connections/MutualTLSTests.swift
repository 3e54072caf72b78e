import Curlew
import Foundation
import Testing

/// Client certificates against nginx with `ssl_verify_client on` (it answers with the
/// certificate's subject, or 400 when none or an unknown one was presented).
@Suite("Mutual TLS against nginx", .timeLimit(.minutes(2)))
struct MutualTLSTests {
    private func options(_ servers: ConnectionServers, _ certificate: ClientCertificate?) -> ConnectionOptions {
        var options = servers.trustingTestCA
        options.tls.clientCertificate = certificate
        return options
    }

    @Test func aClientCertificateFromFilesOrMemoryIsPresented() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        try await withTransport { transport in
            let fromFiles = ClientCertificate.files(certificate: servers.path("client.pem"), privateKey: servers.path("client.key"))
            let fromMemory = ClientCertificate.pem(certificate: try servers.contents("client.pem"), privateKey: try servers.contents("client.key"))
            let encrypted = ClientCertificate.files(
                certificate: servers.path("client.pem"), privateKey: servers.path("client-encrypted.key"), password: "client-key-password")
            for certificate in [fromFiles, fromMemory, encrypted] {
                let subject = try await connectionClient(servers.mutualTLSURL, options(servers, certificate), transport: transport).send(TextGet(path: "/"))
                #expect(subject == "CN=curlew-client", "\(certificate)")
            }
        }
    }

    @Test func withoutACertificateOrWithAnUnknownOneTheServerRefuses() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        try await withTransport { transport in
            // Per client: a client with a certificate on the same transport lends it to no one.
            let withCertificate = connectionClient(servers.mutualTLSURL, options(servers, .files(certificate: servers.path("client.pem"), privateKey: servers.path("client.key"))), transport: transport)
            #expect(try await withCertificate.send(TextGet(path: "/")) == "CN=curlew-client")
            for certificate in [nil, ClientCertificate.files(certificate: servers.path("rogue-client.pem"), privateKey: servers.path("rogue-client.key"))] {
                do {
                    _ = try await connectionClient(servers.mutualTLSURL, options(servers, certificate), transport: transport).send(TextGet(path: "/"))
                    Issue.record("nginx accepted \(String(describing: certificate))")
                } catch let error as CurlewError {
                    #expect(error.code == .unacceptableStatus)
                    #expect(error.status?.code == 400)
                }
            }
        }
    }

    @Test func anUnusableKeyIsATypedErrorAndNothingIsSent() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        try await withTransport { transport in
            let wrongPassword = ClientCertificate.files(
                certificate: servers.path("client.pem"), privateKey: servers.path("client-encrypted.key"), password: "not-it")
            let mismatched = ClientCertificate.pem(certificate: try servers.contents("client.pem"), privateKey: try servers.contents("rogue-client.key"))
            for certificate in [wrongPassword, mismatched] {
                let code = await curlewCode { try await connectionClient(servers.mutualTLSURL, options(servers, certificate), transport: transport).send(TextGet(path: "/")) }
                #expect(code == .tlsClientCertificateInvalid, "\(certificate)")
            }
        }
    }

    @Test func descriptionsNeverShowTheKeyOrItsPassword() throws {
        let certificate = ClientCertificate.pem(certificate: Data("CERT".utf8), privateKey: Data("PRIVATE-KEY-BYTES".utf8), password: "hunter2")
        var dumped = ""
        dump(certificate, to: &dumped)
        for text in [certificate.description, String(describing: certificate), dumped] {
            #expect(!text.contains("PRIVATE-KEY-BYTES"))
            #expect(!text.contains("hunter2"))
        }
    }
}
