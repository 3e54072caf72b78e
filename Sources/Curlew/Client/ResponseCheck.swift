internal import HTTPTypes

/// The inner stage just above the transport: refuses an unacceptable status and a business error
/// by throwing, so retry and token refresh (outside it) see HTTP and server failures as errors.
/// A checked envelope is recorded on the response, so decoding does not parse it again.
enum ResponseCheck {
    /// Generic functions, not a generic type: no type metadata is instantiated per call.
    static func inspect<R: Endpoint>(_ raw: RawResponse, of request: R, summary: RequestSummary) throws(CurlewError) -> RawResponse {
        guard request.accepts(raw.status) else {
            var error = ResponseStatus.error(raw, summary: summary)
            // An error body may carry the envelope too (a refresh code may arrive in a 401):
            // its business code lets token refresh and session end see it.
            if let envelope = request.envelope, case .data = raw.content { error.businessCode = EnvelopeReader(envelope: envelope).code(in: raw) }
            throw error
        }
        guard let envelope = request.envelope, case .data = raw.content else { return raw }
        return try EnvelopeReader(envelope: envelope).verify(raw, summary: summary)
    }
}

/// The error for a status ``Endpoint/accepts(_:)`` refused.
enum ResponseStatus {
    static func error(_ raw: RawResponse, summary: RequestSummary) -> CurlewError {
        var message = "unacceptable status \(raw.status.code)"
        if raw.status.code == 401, let schemes = challengeSchemes(raw.headers) {
            // Which credential the server wants: a `Digest` (which Curlew does not compute) or
            // `Basic` challenge is otherwise only visible in the headers. Only the schemes: the
            // parameters (nonce, realm) say nothing a reader needs.
            message += " (the server asks for \(schemes) authentication)"
        }
        var error = CurlewError(code: .unacceptableStatus, message: message)
            .completed(request: summary, response: raw)
        error.responseBody = raw.body
        error.stage = .status
        return error
    }

    /// The auth schemes of the `WWW-Authenticate` challenges (`"Digest"`, `"Basic or Bearer"`),
    /// `nil` without any: each field's first token, and the first token of a later comma-separated
    /// part followed by a parameter (a second challenge in the same field).
    static func challengeSchemes(_ headers: HTTPFields) -> String? {
        var schemes: [String] = []
        for value in headers[values: .wwwAuthenticate] {
            for (index, part) in value.split(separator: ",").enumerated() {
                let words = part.split(separator: " ", omittingEmptySubsequences: true)
                guard let first = words.first, !first.contains("="), !first.contains("\""),
                    index == 0 || (words.count > 1 && words[1].contains("="))
                else { continue }
                let scheme = String(first.prefix(32))
                if !schemes.contains(scheme) { schemes.append(scheme) }
            }
        }
        return schemes.isEmpty ? nil : schemes.joined(separator: " or ")
    }
}
