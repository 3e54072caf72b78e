public import Foundation

/// How parameter values are written: arrays, booleans, dates, `nil`, and key order.
///
/// ```swift
/// var parameterEncodingOptions: ParameterEncodingOptions {
///     ParameterEncodingOptions(arrayStyle: .brackets, boolStyle: .numeric)
/// }
/// ```
public struct ParameterEncodingOptions: Sendable {
    /// How an array is written in a query string or form.
    public enum ArrayStyle: Sendable, Hashable {
        /// `a=1&a=2` (the default).
        case repeated
        /// `a[]=1&a[]=2` (brackets percent-encoded as `%5B%5D`).
        case brackets
        /// `a[0]=1&a[1]=2`.
        case indexed
        /// `a=1,2`.
        case commaSeparated
    }

    /// How a boolean is written in a query string, form or header.
    public enum BoolStyle: Sendable, Hashable {
        /// `true` / `false` (the default).
        case literal
        /// `1` / `0`.
        case numeric
    }

    /// How a date is written.
    public enum DateStyle: Sendable {
        /// ISO 8601 in UTC, `2024-05-01T12:00:00Z` (the default).
        case iso8601
        /// Whole or fractional seconds since 1970 (a number in JSON).
        case secondsSince1970
        /// Whole milliseconds since 1970 (a number in JSON).
        case millisecondsSince1970
        /// Your own text.
        case custom(@Sendable (Date) -> String)
    }

    /// How a `nil` (``ParameterValue/null``) is written.
    public enum NilStyle: Sendable, Hashable {
        /// Left out entirely (the default).
        case omit
        /// The bare name, `a` (in JSON: `null`).
        case bareName
        /// The name with an empty value, `a=` (in JSON: `null`).
        case emptyValue
    }

    /// Array style. Default: `.repeated`.
    public var arrayStyle: ArrayStyle
    /// Bool style. Default: `.literal`.
    public var boolStyle: BoolStyle
    /// Date style. Default: `.iso8601`.
    public var dateStyle: DateStyle
    /// Nil style. Default: `.omit`.
    public var nilStyle: NilStyle
    /// Whether names (and nested dictionary keys, and JSON object keys) are sorted by their
    /// UTF-8 bytes so the encoded text is stable, e.g. for signatures. Default: `true`.
    public var sortedKeys: Bool

    /// Creates options; every argument has the documented default.
    public init(
        arrayStyle: ArrayStyle = .repeated,
        boolStyle: BoolStyle = .literal,
        dateStyle: DateStyle = .iso8601,
        nilStyle: NilStyle = .omit,
        sortedKeys: Bool = true
    ) {
        self.arrayStyle = arrayStyle
        self.boolStyle = boolStyle
        self.dateStyle = dateStyle
        self.nilStyle = nilStyle
        self.sortedKeys = sortedKeys
    }

    /// Repeated arrays, literal booleans, ISO 8601 dates, `nil` omitted, sorted keys.
    public static let `default` = ParameterEncodingOptions()
}
