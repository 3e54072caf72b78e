internal import HTTPTypes

extension PreparedRequest {
    /// The request as a `curl` command line, for debugging:
    /// method, redacted URL, headers, body, and the timeouts, redirect and compression choices.
    ///
    /// Secrets are redacted: the values of `Authorization`, `Proxy-Authorization`, `Cookie` and
    /// of any header whose name contains a secret fragment (`token`, `secret`, `key`, `auth`,
    /// `session`, `signature`…), secret query values and user info in the URL, and secret
    /// members of a text body (`"password": "<redacted>"`). A binary, large (over 4 KiB), file or
    /// streamed body is named, not inlined. Paste it, replace `<redacted>` with real values, run.
    public var curlDescription: String {
        var parts = ["curl"]
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
                parts.append("--data-binary @- # \(data.count) bytes on standard input")
            }
        case .file(let path, _)?:
            parts.append("--data-binary \(CurlCommandLine.quote("@" + path))")
        case .stream(let stream)?:
            parts.append("--data-binary @- # a streamed body\(stream.length.map { " of \($0) bytes" } ?? "")")
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
