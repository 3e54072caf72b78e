internal import Foundation

/// A type ``AutoCast`` can produce from a JSON string or number.
/// `String`, `Int`, `Int64`, `Double` and `Bool` conform.
public protocol AutoCastable: Decodable, Sendable {
    /// The value for JSON text such as `"42"`, or `nil` when the text does not convert.
    init?(castingText text: String)
    /// The value for a JSON integer, or `nil`.
    init?(castingInteger integer: Int)
    /// The value for a JSON number with a fraction or exponent, or `nil`.
    init?(castingDouble double: Double)
}

extension String: AutoCastable {
    /// The text itself.
    public init?(castingText text: String) { self = text }
    /// The decimal digits, `42`.
    public init?(castingInteger integer: Int) { self = String(integer) }
    /// `2.5`, or `3` for a whole number.
    public init?(castingDouble double: Double) { self = Self.text(of: double) }
}

extension Int: AutoCastable {
    /// `"42"`, `" 42 "` or `"42.0"`; `nil` for `"4.2"` or non-numbers.
    public init?(castingText text: String) {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if let value = Int(trimmed) {
            self = value
        } else if let double = Double(trimmed), let value = Int(exactly: double) {
            self = value
        } else {
            return nil
        }
    }
    /// The integer.
    public init?(castingInteger integer: Int) { self = integer }
    /// The number when it is whole and fits.
    public init?(castingDouble double: Double) {
        guard let value = Int(exactly: double) else { return nil }
        self = value
    }
}

extension Int64: AutoCastable {
    /// Decimal text.
    public init?(castingText text: String) {
        guard let value = Int(castingText: text) else { return nil }
        self = Int64(value)
    }
    /// The integer.
    public init?(castingInteger integer: Int) { self = Int64(integer) }
    /// The number when it is whole and fits.
    public init?(castingDouble double: Double) {
        guard let value = Int64(exactly: double) else { return nil }
        self = value
    }
}

extension Bool: AutoCastable {
    /// `"true"`, `"1"`, `"yes"` and `"false"`, `"0"`, `"no"`, in any case.
    public init?(castingText text: String) {
        switch text.lowercased() {
        case "true", "1", "yes": self = true
        case "false", "0", "no": self = false
        default: return nil
        }
    }
    /// `1` and `0`.
    public init?(castingInteger integer: Int) {
        guard integer == 0 || integer == 1 else { return nil }
        self = integer == 1
    }
    /// Not a boolean.
    public init?(castingDouble double: Double) { nil }
}

extension Double: AutoCastable {
    /// Decimal text, `"2.5"`.
    public init?(castingText text: String) {
        guard let value = Double(text.trimmingCharacters(in: .whitespaces)), value.isFinite else { return nil }
        self = value
    }
    /// The integer as a double.
    public init?(castingInteger integer: Int) { self = Double(integer) }
    /// The number.
    public init?(castingDouble double: Double) { self = double }
}

extension Optional: AutoCastable where Wrapped: AutoCastable {
    /// The wrapped conversion.
    public init?(castingText text: String) {
        guard let value = Wrapped(castingText: text) else { return nil }
        self = value
    }
    /// The wrapped conversion.
    public init?(castingInteger integer: Int) {
        guard let value = Wrapped(castingInteger: integer) else { return nil }
        self = value
    }
    /// The wrapped conversion.
    public init?(castingDouble double: Double) {
        guard let value = Wrapped(castingDouble: double) else { return nil }
        self = value
    }
}

extension String {
    /// `3` for whole numbers, `2.5` otherwise: the text Curlew writes for a number parameter.
    static func text(of number: Double) -> String {
        if number.isFinite, number == number.rounded(), abs(number) < 1e15 { return String(Int64(number)) }
        return String(number)
    }
}
