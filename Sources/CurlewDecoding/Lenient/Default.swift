/// Supplies the value a ``Default`` property takes when its key is missing or `null`.
///
/// `Int` (`0`), `Bool` (`false`), `String` (`""`) and arrays (`[]`) are their own providers;
/// any other default is a provider of your own:
///
/// ```swift
/// enum Untitled: DefaultValueProvider { static let defaultValue = "Untitled" }
/// enum On: DefaultValueProvider { static let defaultValue = true }
/// ```
public protocol DefaultValueProvider {
    /// The type of the value.
    associatedtype Value: Decodable
    /// The value used for a missing key or `null`.
    static var defaultValue: Value { get }
}

/// Decodes a value, or takes a default when the key is missing or `null`.
///
/// ```swift
/// struct Picture: Decodable, Sendable {
///     @Default<Int> var likes: Int
///     @Default<[String]> var tags: [String]
///     @Default<Untitled> var title: String
/// }
/// ```
@propertyWrapper
public struct Default<Provider: DefaultValueProvider> {
    /// The decoded or default value.
    public var wrappedValue: Provider.Value

    /// Wraps a value.
    public init(wrappedValue: Provider.Value) {
        self.wrappedValue = wrappedValue
    }

    /// Takes the provider's default.
    public init() {
        self.wrappedValue = Provider.defaultValue
    }
}

extension Default: Decodable {
    /// Decodes the value; `null` gives the default.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? Provider.defaultValue : try container.decode(Provider.Value.self)
    }
}

extension Default: Encodable where Provider.Value: Encodable {
    /// Encodes the wrapped value.
    public func encode(to encoder: any Encoder) throws {
        try wrappedValue.encode(to: encoder)
    }
}

extension Default: Sendable where Provider.Value: Sendable {}
extension Default: Equatable where Provider.Value: Equatable {}
extension Default: Hashable where Provider.Value: Hashable {}

extension KeyedDecodingContainer {
    /// A missing key gives the ``Default`` property its provider's value.
    public func decode<Provider>(_ type: Default<Provider>.Type, forKey key: Key) throws -> Default<Provider> {
        try decodeIfPresent(type, forKey: key) ?? Default()
    }
}

// The empty value of the common types is their own provider: `@Default<Int>`, `@Default<Bool>`,
// `@Default<String>`, `@Default<[Tag]>`. Any other default is a provider of your own.

extension Int: DefaultValueProvider {
    /// `0`, for `@Default<Int>`.
    public static var defaultValue: Int { 0 }
}

extension Bool: DefaultValueProvider {
    /// `false`, for `@Default<Bool>`.
    public static var defaultValue: Bool { false }
}

extension String: DefaultValueProvider {
    /// `""`, for `@Default<String>`.
    public static var defaultValue: String { "" }
}

extension Array: DefaultValueProvider where Element: Decodable {
    /// `[]`, for `@Default<[Element]>`.
    public static var defaultValue: [Element] { [] }
}
