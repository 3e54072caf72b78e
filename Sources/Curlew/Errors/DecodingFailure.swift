package import Foundation

/// Explains a `DecodingError` as `path: expected X, found Y`, looking up what the body really
/// holds at that path. `prefix` is the key path the decoded part sits at, so paths start at the
/// root of the body (`resp.data` + `[3].id`).
///
/// `package`: `CurlewTesting`'s mock generator explains a value it could not make the same way.
package struct DecodingFailure {
    let path: String
    package let message: String
    /// `.validationFailed` when a ``ValidationFailure`` caused the error, else `.decodingFailed`.
    let code: CurlewError.Code

    package init(_ error: DecodingError, body: Data, prefix: String = "") {
        var code = CurlewError.Code.decodingFailed
        switch error {
        case .typeMismatch(let type, let context):
            path = JSONKeyPath.join(prefix, Self.render(context.codingPath))
            let found = Self.kindOfValue(at: context.codingPath, in: body) ?? "something else"
            message = "\(Self.label(path)): expected \(Self.typeName(type)), found \(found)"
        case .valueNotFound(let type, let context):
            path = JSONKeyPath.join(prefix, Self.render(context.codingPath))
            message = "\(Self.label(path)): expected \(Self.typeName(type)), found null"
        case .keyNotFound(let key, let context):
            path = JSONKeyPath.join(prefix, Self.render(context.codingPath + [key]))
            message = "\(Self.label(path)): required key is missing"
        case .dataCorrupted(let context):
            path = JSONKeyPath.join(prefix, Self.render(context.codingPath))
            if let failure = context.underlyingError as? ValidationFailure {
                code = .validationFailed
                message = "\(Self.label(path)): \(failure.reason)"
            } else if context.debugDescription.hasPrefix("expected ") {
                // Curlew's lenient wrappers explain themselves: "expected one of pic, video, found \"gif\"".
                message = "\(Self.label(path)): \(context.debugDescription)"
            } else {
                let reason = context.underlyingError.map { "\($0)" } ?? context.debugDescription
                message =
                    "\(Self.label(path)): data corrupted: \(context.debugDescription)"
                    + (reason == context.debugDescription ? "" : " (\(reason))")
            }
        @unknown default:
            path = prefix
            message = "\(error)"
        }
        self.code = code
    }

    /// `data[3].id`; the root is the empty string.
    static func render(_ codingPath: [any CodingKey]) -> String {
        var text = ""
        for key in codingPath {
            if let index = key.intValue, key.stringValue == "Index \(index)" || key.stringValue == "\(index)" {
                text += "[\(index)]"
            } else {
                text += text.isEmpty ? key.stringValue : "." + key.stringValue
            }
        }
        return text
    }

    private static func label(_ path: String) -> String { path.isEmpty ? "<root>" : path }

    private static func typeName(_ type: Any.Type) -> String {
        let name = String(describing: type)
        if name.hasPrefix("Array<") || name.hasPrefix("[") { return "array" }
        if name.hasPrefix("Dictionary<") { return "object" }
        return name
    }

    /// What JSON value sits at the coding path: `number`, `string`, `bool`, `null`, `object`,
    /// `array`, or `nil` when it cannot be determined. Found by scanning the bytes (linear in the
    /// body): decoding a tree of probes by trial, as this once did, took time that grew with the
    /// nesting times the size, and the body is the server's.
    static func kindOfValue(at codingPath: [any CodingKey], in body: Data) -> String? {
        JSONSubtreeScanner.kindOfValue(at: codingPath, in: body)
    }
}
