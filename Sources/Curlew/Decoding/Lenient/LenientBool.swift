/// Decodes a boolean sent as `true`/`false`, `1`/`0`, or the strings `"true"`, `"false"`,
/// `"1"`, `"0"`, `"yes"`, `"no"` (any case).
///
/// ```swift
/// struct Settings: Decodable, Sendable {
///     @LenientBool var isPublic: Bool
/// }
/// ```
@propertyWrapper
public struct LenientBool: Sendable, Hashable {
    /// The decoded value.
    public var wrappedValue: Bool

    /// Wraps a value.
    public init(wrappedValue: Bool) {
        self.wrappedValue = wrappedValue
    }
}

extension LenientBool: Codable {
    /// Decodes a bool, `0`/`1` or one of the accepted strings.
    /// - Throws: `DecodingError.typeMismatch` for anything else.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let flag = try? container.decode(Bool.self) {
            wrappedValue = flag
        } else if let number = try? container.decode(Int.self), number == 0 || number == 1 {
            wrappedValue = number == 1
        } else if let text = try? container.decode(String.self), let flag = Self.parse(text) {
            wrappedValue = flag
        } else {
            throw DecodingError.typeMismatch(
                Bool.self, .init(codingPath: decoder.codingPath, debugDescription: "expected a bool, 0/1 or \"true\"/\"false\""))
        }
    }

    /// Encodes a JSON bool.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue)
    }

    private static func parse(_ text: String) -> Bool? {
        switch text.lowercased() {
        case "true", "1", "yes": true
        case "false", "0", "no": false
        default: nil
        }
    }
}
