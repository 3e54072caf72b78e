public import Curlew

/// What to generate for one property, overriding the guess from its name.
///
/// Give hints on the model type (``MockHinted``) or per key path on the generator
/// (``MockGenerator/overrides``):
///
/// ```swift
/// struct Picture: Decodable, Sendable, MockHinted {
///     var id: Int
///     var published: String          // a date, although the name does not say so
///     var nickname: String?
///     var rating: Int
///     static let mockHints: [String: MockHint] = [
///         "published": .date, "nickname": .absent, "rating": .int(1...5),
///     ]
/// }
/// ```
public struct MockHint: Sendable, Hashable {
    enum Kind: Sendable, Hashable {
        case absent, null, present
        case guess(ValueGuess)
        case int(ClosedRange<Int>)
        case number(ClosedRange<Double>)
        case oneOf([JSONValue])
        case value(JSONValue)
        case count(Int)
    }

    let kind: Kind

    /// Leave the key out (an optional property becomes `nil`).
    public static let absent = MockHint(kind: .absent)
    /// Send `null`.
    public static let null = MockHint(kind: .null)
    /// Send a value even when the generator leaves optionals out.
    public static let present = MockHint(kind: .present)
    /// A date: in the decoder's date strategy for `Date`, ISO 8601 text
    /// for `String`, seconds since 1970 for numbers.
    public static let date = MockHint(kind: .guess(.date))
    /// A web URL.
    public static let url = MockHint(kind: .guess(.url))
    /// An image URL.
    public static let imageURL = MockHint(kind: .guess(.imageURL))
    /// An e-mail address.
    public static let email = MockHint(kind: .guess(.email))
    /// A person's name.
    public static let name = MockHint(kind: .guess(.name))
    /// A short title.
    public static let title = MockHint(kind: .guess(.title))
    /// A sentence of text.
    public static let text = MockHint(kind: .guess(.text))
    /// An identifier: a number for integers, an id-like string for text.
    public static let identifier = MockHint(kind: .guess(.identifier))
    /// An integer in a range (also a number with no fraction for `Double`).
    public static func int(_ range: ClosedRange<Int>) -> MockHint { MockHint(kind: .int(range)) }
    /// A number in a range, with two decimals.
    public static func number(_ range: ClosedRange<Double>) -> MockHint { MockHint(kind: .number(range)) }
    /// One of these values, chosen by the seed.
    public static func oneOf(_ values: [JSONValue]) -> MockHint { MockHint(kind: .oneOf(values)) }
    /// Exactly this value.
    public static func value(_ value: JSONValue) -> MockHint { MockHint(kind: .value(value)) }
    /// For an array or dictionary: this many elements.
    public static func count(_ count: Int) -> MockHint { MockHint(kind: .count(max(0, count))) }
}

/// A model that tells the generator what to produce for some of its properties, by coding key
/// (the property's name, or its `CodingKeys` raw value).
public protocol MockHinted {
    /// Hints by coding key.
    static var mockHints: [String: MockHint] { get }
}
