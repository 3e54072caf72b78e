public import Curlew

/// Decodes a `ValidatableModel` value and validates it on the spot, so a nested value's failure
/// carries its full path (`resp.data[2].owner.name: must not be empty`).
///
/// ```swift
/// struct Album: Decodable, Sendable {
///     @Validated var owner: User        // User: Decodable & ValidatableModel
/// }
/// ```
@propertyWrapper
public struct Validated<Value: Decodable & ValidatableModel & Sendable>: Sendable {
    /// The decoded, validated value.
    public var wrappedValue: Value

    /// Wraps a value (not validated).
    public init(wrappedValue: Value) {
        self.wrappedValue = wrappedValue
    }
}

extension Validated: Decodable {
    /// Decodes the value, then validates it.
    /// - Throws: `DecodingError`, or a data-corrupted error wrapping the `ValidationFailure`.
    public init(from decoder: any Decoder) throws {
        let value = try Value(from: decoder)
        try ValidationHook.validate(value, codingPath: decoder.codingPath)
        wrappedValue = value
    }
}
