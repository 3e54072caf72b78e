extension ClientEvent.Kind {
    /// A successful response whose envelope carries a non-empty message:
    /// ``ClientEvent/reason`` is the message. The caller reads it as
    /// ``APIResponse/businessMessage``.
    public static let businessMessage = ClientEvent.Kind("businessMessage")
}

/// Publishes the events an endpoint's ``ResponseEnvelope`` asks for, once per call, on the
/// chain's final outcome (not on attempts a retry or refresh replaced).
enum EnvelopeEvents {
    /// The message event and the code's app event for a successful response.
    static func reportSuccess(_ raw: RawResponse, envelope: ResponseEnvelope?, summary: RequestSummary, reporter: EventReporter) {
        guard reporter.isActive, let envelope, envelope.messagePath != nil || !envelope.codeEvents.isEmpty else { return }
        var raw = raw
        if raw.businessCode == nil, case .data = raw.content, let checked = try? EnvelopeReader(envelope: envelope).verify(raw, summary: summary) {
            // An answer from a middleware (cache, mock) was checked only while decoding.
            raw = checked
        }
        if let message = raw.businessMessage, !message.isEmpty {
            reporter.report(.businessMessage) { event in
                event.reason = message
                event.status = raw.status
            }
        }
        if let code = raw.businessCode, let kind = envelope.codeEvents[code] {
            reporter.report(kind) { event in
                event.reason = "business code \(code)"
                event.status = raw.status
            }
        }
    }

    /// The code's app event for a failed call whose business code has one.
    static func reportFailure(_ error: any Error, envelope: ResponseEnvelope?, reporter: EventReporter) {
        guard reporter.isActive, let envelope, !envelope.codeEvents.isEmpty, let error = error as? CurlewError,
            let code = error.businessCode, let kind = envelope.codeEvents[code]
        else { return }
        reporter.report(kind) { event in
            event.reason = "business code \(code)"
            event.status = error.status
            event.error = error
        }
    }
}
