internal import Foundation
internal import HTTPTypes

extension PreparedRequest {
    /// The request as a `curl` command line, for debugging:
    /// method, redacted URL, headers, body, the timeouts, redirect and compression choices, the
    /// proxy (`--proxy`, `--proxy-user`, `--noproxy`), TLS (`--insecure`, `--cacert`, `--cert`,
    /// `--key`, `--pass`, `--pinnedpubkey`) and host overrides (`--connect-to`).
    ///
    /// Secrets are redacted: the values of `Authorization`, `Proxy-Authorization`, `Cookie` and
    /// of any header whose name contains a secret fragment (`token`, `secret`, `key`, `auth`,
    /// `session`, `signature`…), secret query values and user info in the URL, secret
    /// members of a text body (`"password": "<redacted>"`), the proxy's password and the client
    /// key's password. A binary, large (over 4 KiB), file or streamed body is named, not inlined,
    /// in a comment at the end; certificates and keys held in memory are named by placeholders
    /// (`'<1234 bytes of PEM in memory>'`) to replace with files. Paste it, replace `<redacted>`
    /// and the placeholders with real values, run. (The default, no proxy, is not written: Curlew
    /// ignores the `http_proxy` variables, which the `curl` tool reads.)
    public var curlDescription: String {
        var parts = ["curl"]
        // Comments go at the very end: one before a `\` line break would end the command there.
        var notes: [String] = []
        switch method {
        case .get where content == nil: break
        case .head: parts.append("--head")
        default: parts.append("-X \(CurlCommandLine.quote(method.rawValue))")
        }
        parts.append(CurlCommandLine.quote(summary.redactedURL))
        for field in headers {
            let value = CurlCommandLine.isSecretHeader(field.name, fragments: summary.secretKeyFragments) ? "<redacted>" : field.value
            parts.append("-H \(CurlCommandLine.quote("\(field.name.rawName): \(value)"))")
        }
        switch content {
        case .data(let data)?:
            if data.count <= CurlCommandLine.inlineBodyLimit, let text = String(validating: data, as: UTF8.self) {
                let redacted = ErrorBodyExcerpt.redactSecrets(in: text, fragments: summary.secretKeyFragments)
                parts.append("--data-raw \(CurlCommandLine.quote(redacted))")
            } else {
                parts.append("--data-binary @-")
                notes.append("the body: \(data.count) bytes on standard input")
            }
        case .file(let path, _)?:
            parts.append("--data-binary \(CurlCommandLine.quote("@" + path))")
        case .stream(let stream)?:
            parts.append("--data-binary @-")
            notes.append("the body: a stream\(stream.length.map { " of \($0) bytes" } ?? "") on standard input")
        case nil:
            break
        }
        if options.httpVersion == .http1Only { parts.append("--http1.1") }
        if options.acceptsCompressedResponses {
            // What Curlew asks for (it decodes gzip, deflate, br and zstd itself); `--compressed`
            // alone would ask for whatever codings that curl was built with.
            if headers[.acceptEncoding] == nil {
                parts.append("-H \(CurlCommandLine.quote("Accept-Encoding: " + ResponseContentDecoder.acceptEncoding))")
            }
            parts.append("--compressed")
        }
        if options.redirectLimit > 0 { parts.append("--location --max-redirs \(options.redirectLimit)") }
        parts.append("--connect-timeout \(CurlCommandLine.seconds(options.connectTimeout))")
        if let total = options.totalTimeout { parts.append("--max-time \(CurlCommandLine.seconds(total))") }
        CurlCommandLine.appendConnection(options, to: &parts)
        if !notes.isEmpty { parts[parts.count - 1] += " # " + notes.joined(separator: "; ") }
        return parts.joined(separator: " \\\n  ")
    }
}

extension APIClient {
    /// The `curl` command line for `request` as this client prepares it (URL, default and
    /// request headers, body), secrets redacted (see ``CurlewCore/PreparedRequest/curlDescription``).
    /// Headers that middleware add while sending (authorization, signatures) are not in it.
    /// - Throws: ``/CurlewCore/CurlewError`` when the request cannot be prepared.
    public nonisolated func curlDescription<R: Endpoint>(for request: R) throws(CurlewError) -> String {
        try prepare(request).curlDescription
    }
}

/// Quoting and redaction rules for ``CurlewCore/PreparedRequest/curlDescription``.
enum CurlCommandLine {
    /// Text bodies up to this many bytes are inlined.
    static let inlineBodyLimit = 4096

    /// Header names whose values are always secret.
    static let secretHeaders: Set<String> = ["authorization", "proxy-authorization", "cookie", "set-cookie"]

    static func isSecretHeader(_ name: HTTPField.Name, fragments: Set<String>) -> Bool {
        let lowered = name.canonicalName
        if secretHeaders.contains(lowered) { return true }
        return lowered.contains("key") || fragments.contains { lowered.contains($0) }
    }

    /// The proxy, TLS and host overrides of `options`, secrets redacted.
    static func appendConnection(_ options: TransferOptions, to parts: inout [String]) {
        let connection = options.connection
        if case .server(let server) = connection.proxy.mode {
            let host = server.host.contains(":") && !server.host.hasPrefix("[") ? "[\(server.host)]" : server.host
            parts.append("--proxy \(quote("\(server.kind == .http ? "http" : "socks5h")://\(host):\(server.port)"))")
            if let username = server.username {
                parts.append("--proxy-user \(quote(username + ":" + (server.password == nil ? "" : "<redacted>")))")
            }
            if !server.excludedHosts.isEmpty { parts.append("--noproxy \(quote(server.excludedHosts.joined(separator: ",")))") }
        }
        let tls = connection.tls
        if !tls.verifiesPeer { parts.append("--insecure") }
        switch tls.trustRoots.source {
        case .system: if let path = options.caBundlePath { parts.append("--cacert \(quote(path))") }
        case .file(let path): parts.append("--cacert \(quote(path))")
        case .pem(let bytes): parts.append("--cacert \(quote(inMemory(bytes)))")
        }
        if let certificate = tls.clientCertificate {
            switch certificate.material {
            case .files(let certificatePath, let keyPath):
                parts.append("--cert \(quote(certificatePath))")
                if let keyPath { parts.append("--key \(quote(keyPath))") }
            case .pem(let certificateBytes, let keyBytes):
                parts.append("--cert \(quote(inMemory(certificateBytes)))")
                if keyBytes != nil { parts.append("--key '<private key in memory>'") }
            }
            if certificate.password != nil { parts.append("--pass '<redacted>'") }
        }
        if !tls.pinnedPublicKeys.isEmpty {
            parts.append("--pinnedpubkey \(quote(tls.pinnedPublicKeys.map(\.description).joined(separator: ";")))")
        }
        for override in connection.hostOverrides { parts.append("--connect-to \(quote(override.connectToLine))") }
    }

    /// The placeholder for PEM bytes held in memory, which `curl` can read only from a file.
    private static func inMemory(_ bytes: Data) -> String { "<\(bytes.count) bytes of PEM in memory>" }

    /// POSIX shell single quoting.
    static func quote(_ text: String) -> String {
        "'" + text.replacing("'", with: "'\\''") + "'"
    }

    static func seconds(_ duration: Duration) -> String {
        let (seconds, attoseconds) = duration.components
        let milliseconds = attoseconds / 1_000_000_000_000_000
        guard milliseconds > 0 else { return "\(seconds)" }
        let digits = String(milliseconds)
        return "\(seconds)." + String(repeating: "0", count: max(0, 3 - digits.count)) + digits
    }
}
