/// Any JSON value, for dynamic access to a body whose shape is not worth a model.
///
/// ```swift
/// let body = try await client.send(Fetch<JSONValue>(path: "status"))
/// if body["resp"]?["code"] == 0, let name = body.resp?.data?[0]?.name?.stringValue { … }
/// ```
///
/// Integers that fit in `Int` decode as ``int(_:)``, other numbers as ``double(_:)``; the two are
/// different values (`.int(1) != .double(1)`), use ``doubleValue`` to compare numerically.
@dynamicMemberLookup
public enum JSONValue: Sendable, Hashable {
    /// `null`.
    case null
    /// `true` or `false`.
    case bool(Bool)
    /// A number without fraction or exponent that fits in `Int`.
    case int(Int)
    /// Any other number.
    case double(Double)
    /// A string.
    case string(String)
    /// An array.
    case array([JSONValue])
    /// An object.
    case object([String: JSONValue])

    /// The member `key` of an object; `nil` for a missing key or a value that is not an object.
    public subscript(key: String) -> JSONValue? {
        if case .object(let object) = self { return object[key] }
        return nil
    }

    /// The element at `index` of an array; `nil` when out of range or not an array.
    public subscript(index: Int) -> JSONValue? {
        if case .array(let array) = self, array.indices.contains(index) { return array[index] }
        return nil
    }

    /// `value.member` is `value["member"]`.
    public subscript(dynamicMember member: String) -> JSONValue? { self[member] }

    /// The string, if this is a string.
    public var stringValue: String? {
        if case .string(let text) = self { return text }
        return nil
    }

    /// The integer, if this is an integer (or a double with an exact integer value).
    public var intValue: Int? {
        switch self {
        case .int(let number): number
        case .double(let number): Int(exactly: number)
        default: nil
        }
    }

    /// The number as a `Double`, if this is a number.
    public var doubleValue: Double? {
        switch self {
        case .int(let number): Double(number)
        case .double(let number): number
        default: nil
        }
    }

    /// The boolean, if this is a boolean.
    public var boolValue: Bool? {
        if case .bool(let flag) = self { return flag }
        return nil
    }

    /// The elements, if this is an array.
    public var arrayValue: [JSONValue]? {
        if case .array(let array) = self { return array }
        return nil
    }

    /// The members, if this is an object.
    public var objectValue: [String: JSONValue]? {
        if case .object(let object) = self { return object }
        return nil
    }

    /// Whether this is `null`.
    public var isNull: Bool { self == .null }

    /// `"null"`, `"bool"`, `"number"`, `"string"`, `"array"` or `"object"`.
    public var kind: String {
        switch self {
        case .null: "null"
        case .bool: "bool"
        case .int, .double: "number"
        case .string: "string"
        case .array: "array"
        case .object: "object"
        }
    }
}
