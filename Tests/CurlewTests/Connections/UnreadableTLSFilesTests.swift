import Curlew
import Foundation
import LoopbackServer
import Testing
import TestSupport

/// A TLS file setting naming a path that cannot be read is a settings mistake, refused before
/// anything is sent with the setting and the path in the message.
@Suite("Unreadable TLS files", .timeLimit(.minutes(1)))
struct UnreadableTLSFilesTests {
    /// Trust roots from a file that does not exist failed only when a TLS connection started, as
    /// the transport's `.tlsFailure` ("error setting certificate file: …"), which retry and
    /// failover take for a server's trouble; over plain http the mistake went unnoticed. Now
    /// every call fails unsent with a settings error.
    @Test func aMissingOrUnreadableTLSFileIsRefusedUnsentNamingThePath() async throws {
        let folder = FileManager.default.temporaryDirectory.path
        let missing = folder + "/curlew-no-such-root-\(UUID().uuidString).pem"
        let real = folder + "/curlew-root-\(UUID().uuidString).pem"
        try Data("not checked for content".utf8).write(to: URL(fileURLWithPath: real))
        defer { try? FileManager.default.removeItem(atPath: real) }
        let cases: [(String, (inout TransferOptions) -> Void)] = [
            ("TLSOptions.trustRoots names \(missing), which does not exist", { $0.connection.tls.trustRoots = .file(missing) }),
            ("TLSOptions.trustRoots names \(folder), which is a folder, not a PEM file", { $0.connection.tls.trustRoots = .file(folder) }),
            ("TransferOptions.caBundlePath names \(missing), which does not exist", { $0.caBundlePath = missing }),
            ("the client certificate names \(missing), which does not exist", { $0.connection.tls.clientCertificate = .files(certificate: missing) }),
            (
                "the client certificate's private key names \(missing + ".key"), which does not exist",
                { $0.connection.tls.clientCertificate = .files(certificate: real, privateKey: missing + ".key") }
            ),
        ]
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            for (message, adjust) in cases {
                var options = TransferOptions()
                adjust(&options)
                let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, transferOptions: options), transport: transport)
                let error = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "x")) }
                #expect(error?.code == .invalidConnectionSettings)
                #expect(error?.stage == .configuration)
                #expect(error?.message == message + "; nothing was sent")
            }
            #expect(server.requestCount == 0)
        }
        // Over https, where it used to fail as a TLS error.
        let servers = try ConnectionServers.fromEnvironment()
        try await withTransport { transport in
            var connection = ConnectionOptions()
            connection.tls.trustRoots = .file(missing)
            let error = await #expect(throws: CurlewError.self) { try await connectionClient(servers.tlsURL, connection, transport: transport).send(ConnectionProbe()) }
            #expect(error?.code == .invalidConnectionSettings)
            #expect(error?.message == "TLSOptions.trustRoots names \(missing), which does not exist; nothing was sent")
        }
    }
}
