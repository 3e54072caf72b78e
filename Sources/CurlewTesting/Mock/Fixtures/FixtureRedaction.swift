import Curlew
internal import Foundation
internal import HTTPTypes

/// What a ``FixtureRecorder`` keeps of a response: headers without secrets or per-exchange
/// values, JSON bodies with secret members replaced.
enum FixtureRedaction {
    static let dropped: Set<String> = [
        "date", "content-length", "connection", "keep-alive", "transfer-encoding", "age", "expires", "via",
        "content-encoding",
    ]
    static let secretFragments = ["cookie", "authorization", "token", "key", "secret", "signature", "session"]

    static func headers(_ fields: HTTPFields) -> [String: JSONValue] {
        var kept: [String: JSONValue] = [:]
        for field in fields {
            let name = field.name.canonicalName
            guard !dropped.contains(name) else { continue }
            kept[name] = .string(secretFragments.contains(where: name.contains) ? "REDACTED" : field.value)
        }
        return kept
    }

    /// The body with secret members redacted (re-serialized only when something was redacted).
    static func body(_ body: Data, fields: Set<String>) -> Data {
        guard !fields.isEmpty, let json = try? JSONValue(jsonData: body) else { return body }
        var changed = false
        let redacted = redact(json, fields: fields, changed: &changed)
        return changed ? Data(MockGenerator.text(redacted, pretty: true).utf8) : body
    }

    private static func redact(_ value: JSONValue, fields: Set<String>, changed: inout Bool) -> JSONValue {
        switch value {
        case .object(let members):
            var result: [String: JSONValue] = [:]
            for (key, member) in members {
                let lower = key.lowercased()
                if fields.contains(where: lower.contains) {
                    result[key] = .string("REDACTED")
                    changed = true
                } else {
                    result[key] = redact(member, fields: fields, changed: &changed)
                }
            }
            return .object(result)
        case .array(let elements):
            return .array(elements.map { redact($0, fields: fields, changed: &changed) })
        default:
            return value
        }
    }
}
