import Curlew
import Foundation
import Testing

/// The proxy, TLS and host overrides in a request's `curl` command line, secrets redacted, and a
/// command that still runs when a body is named rather than inlined.
@Suite("curl command lines: connection options")
struct CurlConnectionDescriptionTests {
    /// A proxy with credentials, TLS with custom roots, a client certificate with a password, a
    /// pin and a host override were all left out, so the printed command reached another server
    /// (or failed TLS) where the client succeeded. Passwords are redacted.
    @Test func proxyTLSAndHostOverridesAreWrittenWithSecretsRedacted() throws {
        var request = PreparedRequest(method: .get, url: "https://api.example.com/x")
        request.options.connection.proxy = .http(host: "proxy.internal", port: 3128, username: "ann", password: "hunter2", excluding: ["localhost", ".corp"])
        request.options.connection.tls.verifiesPeer = false
        request.options.connection.tls.trustRoots = .file("/etc/company/root.pem")
        request.options.connection.tls.clientCertificate = .files(
            certificate: "/etc/company/client.pem", privateKey: "/etc/company/client.key", password: "keypass")
        let pin = try #require(PublicKeyPin(sha256: Data(repeating: 7, count: 32)))
        request.options.connection.tls.pinnedPublicKeys = [pin]
        request.options.connection.hostOverrides = [try #require(HostOverride(host: "api.example.com", port: 443, address: "10.0.0.7"))]
        let command = request.curlDescription
        #expect(!command.contains("hunter2"))
        #expect(!command.contains("keypass"))
        #expect(
            command.hasSuffix(
                "--max-time 60 \\\n  --proxy 'http://proxy.internal:3128' \\\n  --proxy-user 'ann:<redacted>' \\\n  --noproxy 'localhost,.corp' \\\n"
                    + "  --insecure \\\n  --cacert '/etc/company/root.pem' \\\n  --cert '/etc/company/client.pem' \\\n  --key '/etc/company/client.key' \\\n"
                    + "  --pass '<redacted>' \\\n  --pinnedpubkey '\(pin)' \\\n  --connect-to 'api.example.com:443:10.0.0.7:'"))
    }

    /// Roots and a client certificate held in memory have no file `curl` could read: they are
    /// named by placeholders, never inlined; a SOCKS5 proxy resolves names (`socks5h`); the
    /// client's CA bundle is the `--cacert` of system trust.
    @Test func inMemoryMaterialIsNamedByPlaceholders() {
        var memory = PreparedRequest(method: .get, url: "https://h/x")
        memory.options.connection.proxy = .socks5(host: "::1", port: 1080)
        memory.options.connection.tls.trustRoots = .pem(Data(count: 1234))
        memory.options.connection.tls.clientCertificate = .pem(certificate: Data(count: 900), privateKey: Data(count: 300))
        #expect(
            memory.curlDescription.hasSuffix(
                "--max-time 60 \\\n  --proxy 'socks5h://[::1]:1080' \\\n  --cacert '<1234 bytes of PEM in memory>' \\\n"
                    + "  --cert '<900 bytes of PEM in memory>' \\\n  --key '<private key in memory>'"))
        var bundle = PreparedRequest(method: .get, url: "https://h/x")
        bundle.options.caBundlePath = "/opt/ca.pem"
        #expect(bundle.curlDescription.hasSuffix("--max-time 60 \\\n  --cacert '/opt/ca.pem'"))
        #expect(!PreparedRequest(method: .get, url: "https://h/x").curlDescription.contains("--proxy"))
    }

    /// A binary body is named in a comment at the end: the comment stood in the middle, where it
    /// swallowed the line break's `\` and cut the command short (the shell ran `curl` without the
    /// timeouts, then failed on `--connect-timeout` as a command of its own).
    @Test func aNamedBodyLeavesTheCommandRunnable() throws {
        let upload = PreparedRequest(method: .put, url: "http://h/x", body: Data([0xFF, 0xFE, 0x00]))
        let command = upload.curlDescription
        #expect(command.hasSuffix("--max-time 60 # the body: 3 bytes on standard input"))
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        shell.arguments = ["-c", "curl() { printf '%s\\n' \"$@\"; }\n" + command]
        let output = Pipe()
        shell.standardOutput = output
        shell.standardError = FileHandle.nullDevice
        try shell.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        shell.waitUntilExit()
        #expect(shell.terminationStatus == 0)
        #expect(
            String(decoding: printed, as: UTF8.self).split(separator: "\n") == [
                "-X", "PUT", "http://h/x", "--data-binary", "@-", "-H", "Accept-Encoding: gzip, deflate, br, zstd", "--compressed", "--location",
                "--max-redirs", "10", "--connect-timeout", "10", "--max-time", "60",
            ])
    }
}
