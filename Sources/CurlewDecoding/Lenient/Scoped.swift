/// Decodes an enum from its raw value and, for a value outside the enum's cases, fails with the
/// allowed values listed: `kind: expected one of pic, video, found "gif"`.
///
/// ```swift
/// enum Kind: String, Decodable, CaseIterable, Sendable { case pic, video }
/// struct Media: Decodable, Sendable {
///     @Scoped var kind: Kind
/// }
/// ```
@propertyWrapper
public struct Scoped<Value: RawRepresentable & CaseIterable & Decodable & Sendable>: Sendable
where Value.RawValue: Decodable {
    /// The decoded value.
    public var wrappedValue: Value

    /// Wraps a value.
    public init(wrappedValue: Value) {
        self.wrappedValue = wrappedValue
    }
}

extension Scoped: Decodable {
    /// Decodes the raw value and maps it to a case.
    /// - Throws: `DecodingError.dataCorrupted` listing the allowed values when it is not one.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        let raw = try container.decode(Value.RawValue.self)
        guard let value = Value(rawValue: raw) else {
            let allowed = Value.allCases.map { "\($0.rawValue)" }.joined(separator: ", ")
            let found = raw is String ? "\"\(raw)\"" : "\(raw)"
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "expected one of \(allowed), found \(found)"))
        }
        wrappedValue = value
    }
}

extension Scoped: Equatable where Value: Equatable {}
extension Scoped: Hashable where Value: Hashable {}
