public import Foundation

/// A Swift value that can be a request parameter: the type of a `@Query`, `@Field`, `@Header`
/// or `@Path` property.
///
/// Strings, integers, floating-point numbers, `Bool`, `Date`, `URL`, `UUID`, optionals, arrays,
/// string-keyed dictionaries and ``ParameterValue`` conform. A `RawRepresentable` enum conforms
/// with an empty extension:
///
/// ```swift
/// enum Sort: String, ParameterConvertible { case newest, popular }
/// ```
public protocol ParameterConvertible: Sendable {
    /// The value as a parameter tree.
    var parameterValue: ParameterValue { get }
}

extension ParameterConvertible where Self: RawRepresentable, RawValue: ParameterConvertible {
    /// The raw value's parameter value.
    public var parameterValue: ParameterValue { rawValue.parameterValue }
}

extension ParameterValue: ParameterConvertible {
    /// The value itself.
    public var parameterValue: ParameterValue { self }
}

extension String: ParameterConvertible {
    /// `.string(self)`.
    public var parameterValue: ParameterValue { .string(self) }
}

extension Substring: ParameterConvertible {
    /// `.string(String(self))`.
    public var parameterValue: ParameterValue { .string(String(self)) }
}

extension Int: ParameterConvertible {
    /// `.int(self)`.
    public var parameterValue: ParameterValue { .int(self) }
}

extension Int32: ParameterConvertible {
    /// `.int(Int(self))`.
    public var parameterValue: ParameterValue { .int(Int(self)) }
}

extension Int64: ParameterConvertible {
    /// `.int(Int(self))`.
    public var parameterValue: ParameterValue { .int(Int(self)) }
}

extension UInt: ParameterConvertible {
    /// `.int` when it fits, otherwise its decimal text.
    public var parameterValue: ParameterValue { Int(exactly: self).map { .int($0) } ?? .string(String(self)) }
}

extension UInt64: ParameterConvertible {
    /// `.int` when it fits, otherwise its decimal text.
    public var parameterValue: ParameterValue { Int(exactly: self).map { .int($0) } ?? .string(String(self)) }
}

extension Double: ParameterConvertible {
    /// `.double(self)`.
    public var parameterValue: ParameterValue { .double(self) }
}

extension Float: ParameterConvertible {
    /// `.double` of the `Double` with the same shortest decimal text, so `0.1` is sent as `0.1`
    /// (widening the binary value would send `0.10000000149011612`).
    public var parameterValue: ParameterValue { .double(Double(description) ?? Double(self)) }
}

extension Bool: ParameterConvertible {
    /// `.bool(self)`.
    public var parameterValue: ParameterValue { .bool(self) }
}

extension Date: ParameterConvertible {
    /// `.date(self)`.
    public var parameterValue: ParameterValue { .date(self) }
}

extension URL: ParameterConvertible {
    /// `.string(absoluteString)`.
    public var parameterValue: ParameterValue { .string(absoluteString) }
}

extension UUID: ParameterConvertible {
    /// `.string(uuidString)`.
    public var parameterValue: ParameterValue { .string(uuidString) }
}

extension Optional: ParameterConvertible where Wrapped: ParameterConvertible {
    /// The wrapped value's parameter value, or `.null`.
    public var parameterValue: ParameterValue { self?.parameterValue ?? .null }
}

extension Array: ParameterConvertible where Element: ParameterConvertible {
    /// `.array` of the elements' values.
    public var parameterValue: ParameterValue { .array(map(\.parameterValue)) }
}

extension Dictionary: ParameterConvertible where Key == String, Value: ParameterConvertible {
    /// `.dictionary` of the values.
    public var parameterValue: ParameterValue { .dictionary(mapValues(\.parameterValue)) }
}
