public import Foundation

/// A parameter value as a small, `Sendable` tree: what declared parameters and
/// ``Endpoint/parameters`` hold before they are encoded into a query string, a form or JSON.
///
/// ```swift
/// var parameters: [String: ParameterValue] {
///     ["page": 2, "tags": ["sea", "sunset"], "filter": ["min_width": 800], "since": .date(since)]
/// }
/// ```
///
/// How each case is written on the wire is chosen by ``ParameterEncodingOptions``.
public enum ParameterValue: Sendable, Hashable {
    /// Text.
    case string(String)
    /// An integer.
    case int(Int)
    /// A floating-point number; NaN and infinities cannot be encoded as JSON.
    case double(Double)
    /// A boolean, written per ``ParameterEncodingOptions/boolStyle``.
    case bool(Bool)
    /// A date, written per ``ParameterEncodingOptions/dateStyle``.
    case date(Date)
    /// A list, written per ``ParameterEncodingOptions/arrayStyle`` in queries and forms.
    case array([ParameterValue])
    /// Nested names (`filter[min_width]=800` in queries and forms, an object in JSON).
    case dictionary([String: ParameterValue])
    /// No value, written per ``ParameterEncodingOptions/nilStyle`` (omitted by default).
    case null
}

extension ParameterValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    /// `.string(value)`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// `.int(value)`.
    public init(integerLiteral value: Int) { self = .int(value) }
    /// `.double(value)`.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// `.bool(value)`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// `.array(elements)`.
    public init(arrayLiteral elements: ParameterValue...) { self = .array(elements) }
    /// `.dictionary(…)`; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, ParameterValue)...) {
        self = .dictionary(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    /// `.null`.
    public init(nilLiteral: ()) { self = .null }
}
