/// Supplies the value a ``Default`` property takes when its key is missing or `null`.
///
/// ```swift
/// enum Untitled: DefaultValueProvider { static let defaultValue = "Untitled" }
/// ```
public protocol DefaultValueProvider {
    /// The type of the value.
    associatedtype Value: Decodable & Sendable
    /// The value used for a missing key or `null`.
    static var defaultValue: Value { get }
}

/// Decodes a value, or takes a default when the key is missing or `null`.
///
/// ```swift
/// struct Picture: Decodable, Sendable {
///     @Default<Defaults.Zero> var likes: Int
///     @Default<Defaults.EmptyArray<String>> var tags: [String]
///     @Default<Untitled> var title: String
/// }
/// ```
@propertyWrapper
public struct Default<Provider: DefaultValueProvider>: Sendable {
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

extension Default: Equatable where Provider.Value: Equatable {}
extension Default: Hashable where Provider.Value: Hashable {}

extension KeyedDecodingContainer {
    /// A missing key gives the ``Default`` property its provider's value.
    public func decode<Provider>(_ type: Default<Provider>.Type, forKey key: Key) throws -> Default<Provider> {
        try decodeIfPresent(type, forKey: key) ?? Default()
    }
}

/// Ready-made ``DefaultValueProvider``s.
public enum Defaults {
    /// `0`.
    public enum Zero: DefaultValueProvider {
        /// `0`.
        public static var defaultValue: Int { 0 }
    }
    /// `false`.
    public enum False: DefaultValueProvider {
        /// `false`.
        public static var defaultValue: Bool { false }
    }
    /// `true`.
    public enum True: DefaultValueProvider {
        /// `true`.
        public static var defaultValue: Bool { true }
    }
    /// `""`.
    public enum EmptyString: DefaultValueProvider {
        /// `""`.
        public static var defaultValue: String { "" }
    }
    /// `[]`.
    public enum EmptyArray<Element: Decodable & Sendable>: DefaultValueProvider {
        /// `[]`.
        public static var defaultValue: [Element] { [] }
    }
}
