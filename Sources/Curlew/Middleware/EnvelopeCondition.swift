/// One condition on an envelope's body that a successful response must meet, beside its success
/// code (``ResponseEnvelope/successConditions``). Values are compared as text, like codes.
///
/// ```swift
/// // Success when status == true && msg == nil
/// let envelope = ResponseEnvelope(codePath: "status", messagePath: "msg", payloadPath: "data",
///                                 successCodes: ["true"]).requiring(.absent("msg"))
/// ```
public enum EnvelopeCondition: Sendable, Hashable, CustomStringConvertible {
    /// The value at the key path is one of these (compared as text: `1`, `"1"`, `1.0` → `"1"`).
    case oneOf(String, Set<String>)
    /// The key path is missing, `null` or an empty string.
    case absent(String)
    /// The key path holds a value other than `null`.
    case present(String)

    /// Whether the response meets the condition.
    func isMet(by raw: RawResponse) -> Bool {
        switch self {
        case .oneOf(let path, let values):
            guard let value = try? raw.json(at: path), let text = EnvelopeReader.text(of: value) else { return false }
            return values.contains(text)
        case .absent(let path):
            guard let value = try? raw.json(at: path) else { return true }
            return value == .null || value == .string("")
        case .present(let path):
            guard let value = try? raw.json(at: path) else { return false }
            return value != .null
        }
    }

    /// `msg is absent`, `status is one of [true]`, `data is present`.
    public var description: String {
        switch self {
        case .oneOf(let path, let values): "\(path) is one of [\(values.sorted().joined(separator: ", "))]"
        case .absent(let path): "\(path) is absent"
        case .present(let path): "\(path) is present"
        }
    }
}
