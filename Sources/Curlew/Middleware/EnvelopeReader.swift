internal import Foundation

/// Reads a ``ResponseEnvelope`` out of a response: checks the business code and narrows the body
/// to the payload.
struct EnvelopeReader {
    let envelope: ResponseEnvelope

    /// Checks the business code: returns the response with ``RawResponse/businessCode`` and
    /// ``RawResponse/businessMessage`` set, or throws the server error the code means (or a
    /// data-format error when the body is not the envelope).
    func verify(_ raw: RawResponse, summary: RequestSummary) throws(CurlewError) -> RawResponse {
        func complete(_ error: CurlewError) -> CurlewError {
            var error = error.completed(request: summary, response: raw)
            error.responseBody = raw.body
            error.stage = .envelope
            return error
        }
        let code: String
        do throws(CurlewError) {
            guard let text = Self.text(of: try raw.json(at: envelope.codePath)) else {
                throw CurlewError(code: .decodingFailed, message: "the envelope's \(envelope.codePath) is not a code", dataPath: envelope.codePath)
            }
            code = text
        } catch {
            var malformed = complete(error)
            malformed.message = "the body is not the expected envelope (no code at \(envelope.codePath)): \(error.message)"
            throw malformed
        }
        // `nil` when the body carries no message (absent or `null`), even if the envelope names one.
        let found = envelope.messagePath.flatMap { try? raw.json(at: $0) }.flatMap(Self.text)
        let message = found ?? ""
        guard envelope.successCodes.contains(code) else {
            throw complete(CurlewError(code: .serverError, message: message.isEmpty ? "business code \(code)" : message, businessCode: code))
        }
        for condition in envelope.successConditions where !condition.isMet(by: raw) {
            let reason = "\(condition) does not hold"
            throw complete(CurlewError(code: .serverError, message: message.isEmpty ? reason : "\(message) (\(reason))", businessCode: code))
        }
        var checked = raw
        checked.businessCode = code
        checked.businessMessage = found
        return checked
    }

    /// The business code in a body, or `nil` when it is not the envelope.
    func code(in raw: RawResponse) -> String? {
        (try? raw.json(at: envelope.codePath)).flatMap(Self.text)
    }

    /// The response narrowed to the envelope's payload (itself when the payload is the body).
    func payload(of raw: RawResponse, summary: RequestSummary) throws(CurlewError) -> RawResponse {
        guard let payloadPath = envelope.payloadPath else { return raw }
        do {
            return try raw.narrowed(to: payloadPath)
        } catch {
            var error = error.completed(request: summary, response: raw)
            error.responseBody = raw.body
            error.stage = .envelope
            throw error
        }
    }

    /// Moves a data-format error's path from the payload to the root of the body.
    static func prefix(_ error: inout CurlewError, with payloadPath: String?, raw: RawResponse) {
        guard let payloadPath else { return }
        let inner = error.dataPath ?? ""
        let full = JSONKeyPath.join(payloadPath, inner)
        let label = inner.isEmpty ? "<root>" : inner
        if error.message.hasPrefix(label + ":") {
            error.message = full + error.message.dropFirst(label.count)
        }
        error.dataPath = full
        error.bodySnippet = CurlewError.snippet(of: raw.body)
    }

    /// A code as text: numbers without a fraction print as integers, booleans as `true`/`false`.
    static func text(of value: JSONValue) -> String? {
        switch value {
        case .string(let text): text
        case .int(let number): String(number)
        case .double(let number): number.rounded() == number && abs(number) < 1e15 ? String(Int(number)) : String(number)
        case .bool(let flag): flag ? "true" : "false"
        default: nil
        }
    }
}
