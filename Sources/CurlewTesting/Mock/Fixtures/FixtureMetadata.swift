import Curlew
internal import Foundation
internal import HTTPTypes

/// A fixture's sidecar metadata, `<Name>[.<scenario>].meta.json`:
///
/// ```json
/// {
///   "status": 404,
///   "headers": { "Retry-After": "3" },
///   "delayMilliseconds": 250,
///   "error": "connectTimeout"
/// }
/// ```
///
/// Every member is optional; an unknown member is an error (a typo never passes silently).
/// `error` names a transport-level `CurlewError.Code` to throw instead of answering.
struct FixtureMetadata {
    var status: HTTPResponse.Status?
    var headers: HTTPFields = [:]
    var delay: Duration?
    var failure: CurlewError.Code?

    static let members: Set<String> = ["status", "headers", "delayMilliseconds", "error"]

    /// The codes a fixture may simulate: those of level `.transport`.
    static let simulatedFailures: [CurlewError.Code] = [
        .cannotConnect, .dnsFailure, .tlsFailure, .connectTimeout, .totalTimeout, .idleTimeout, .connectionReset,
        .emptyReply, .tooManyRedirects, .redirectRefused, .bodyTooLarge, .shutdown, .transportFailure,
    ]

    /// Parses metadata.
    /// - Throws: `.fixtureInvalid` naming the file and the member at fault.
    init(_ data: Data, file: String) throws(CurlewError) {
        func invalid(_ why: String) -> CurlewError {
            CurlewError(code: .fixtureInvalid, message: "the fixture metadata \(file) is invalid: \(why)")
        }
        let json: JSONValue
        do {
            json = try JSONValue(jsonData: data)
        } catch {
            throw invalid("not JSON (\(error))")
        }
        guard case .object(let members) = json else { throw invalid("expected an object") }
        if let unknown = members.keys.sorted().first(where: { !Self.members.contains($0) }) {
            throw invalid("unknown member \"\(unknown)\" (expected \(Self.members.sorted().joined(separator: ", ")))")
        }
        if let status = members["status"] {
            guard let code = status.intValue, (100...599).contains(code) else { throw invalid("status must be an integer 100...599") }
            self.status = HTTPResponse.Status(code: code)
        }
        if let headers = members["headers"] {
            guard case .object(let fields) = headers else { throw invalid("headers must be an object of strings") }
            for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
                guard let text = value.stringValue, let field = HTTPField.Name(name), !text.contains(where: \.isNewline) else {
                    throw invalid("header \"\(name)\" is not a valid name with a string value")
                }
                self.headers.append(HTTPField(name: field, value: text))
            }
        }
        if let delay = members["delayMilliseconds"] {
            guard let milliseconds = delay.intValue, (0...600_000).contains(milliseconds) else {
                throw invalid("delayMilliseconds must be an integer 0...600000")
            }
            self.delay = .milliseconds(milliseconds)
        }
        if let error = members["error"] {
            guard let name = error.stringValue, let code = Self.simulatedFailures.first(where: { $0.description == name }) else {
                throw invalid("error must be one of \(Self.simulatedFailures.map(\.description).joined(separator: ", "))")
            }
            self.failure = code
        }
    }
}
