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
        var error = CurlewError(code: .unacceptableStatus, message: "unacceptable status \(raw.status.code)")
            .completed(request: summary, response: raw)
        error.responseBody = raw.body
        error.stage = .status
        return error
    }
}
