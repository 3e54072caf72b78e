/// Decodes a value that the server sends as a string or a number, whichever it is:
/// `"id": 42` and `"id": "42"` both give `id == "42"` for a `String`
/// property, and `42` for an `Int` one. A `Bool` property also takes `1`/`0` and the strings
/// `"true"`, `"false"`, `"1"`, `"0"`, `"yes"`, `"no"` (any case).
///
/// ```swift
/// struct Picture: Decodable, Sendable {
///     @AutoCast var id: String
///     @AutoCast var width: Int
///     @AutoCast var rating: Double? = nil     // null or missing gives nil
///     @AutoCast var isPublic: Bool            // true, 1, "yes", "true"…
/// }
/// ```
///
/// A value that cannot convert (`"wide"` for an `Int`) fails with `expected Int, found string`.
@propertyWrapper
public struct AutoCast<Value: AutoCastable>: Sendable {
    /// The decoded value.
    public var wrappedValue: Value

    /// Wraps a value.
    public init(wrappedValue: Value) {
        self.wrappedValue = wrappedValue
    }
}

extension AutoCast: Decodable {
    /// Decodes the value directly, or converts it from a string or number.
    /// - Throws: `DecodingError.typeMismatch` when no conversion applies.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let value = try? container.decode(Value.self) {
            wrappedValue = value
            return
        }
        if let integer = try? container.decode(Int.self), let value = Value(castingInteger: integer) {
            wrappedValue = value
        } else if let double = try? container.decode(Double.self), let value = Value(castingDouble: double) {
            wrappedValue = value
        } else if let text = try? container.decode(String.self), let value = Value(castingText: text) {
            wrappedValue = value
        } else {
            throw DecodingError.typeMismatch(
                Value.self, .init(codingPath: decoder.codingPath, debugDescription: "expected \(Value.self) or a string or number that converts"))
        }
    }
}

extension AutoCast: Encodable where Value: Encodable {
    /// Encodes the wrapped value as it is.
    public func encode(to encoder: any Encoder) throws {
        try wrappedValue.encode(to: encoder)
    }
}

extension AutoCast: Equatable where Value: Equatable {}
extension AutoCast: Hashable where Value: Hashable {}

extension KeyedDecodingContainer {
    /// A missing key gives `nil` for an optional ``AutoCast`` property.
    public func decode<Wrapped: AutoCastable>(_ type: AutoCast<Wrapped?>.Type, forKey key: Key) throws -> AutoCast<Wrapped?> {
        try decodeIfPresent(type, forKey: key) ?? AutoCast(wrappedValue: nil)
    }
}
