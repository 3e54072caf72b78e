internal import Curlew

/// A dictionary whose values' types are chosen by a discriminator field, like
/// ``PolymorphicArray`` for arrays. Values
/// with an unknown discriminator are left out or fail, per the family's
/// ``PolymorphicFamily/skipsUnknownTypes``.
///
/// ```swift
/// // {"cover": {"type": "pic", …}, "intro": {"type": "video", …}}
/// struct Album: Decodable, Sendable {
///     @PolymorphicDictionary<MediaFamily> var slots: [String: any Media]
/// }
/// ```
@propertyWrapper
public struct PolymorphicDictionary<Family: PolymorphicFamily>: Sendable {
    /// The decoded members by key.
    public var wrappedValue: [String: Family.Member]

    /// Wraps members.
    public init(wrappedValue: [String: Family.Member]) {
        self.wrappedValue = wrappedValue
    }

    /// The decoded members by key (the same as ``wrappedValue``).
    public var members: [String: Family.Member] { wrappedValue }
}

extension PolymorphicDictionary: Decodable {
    /// Decodes each value by its discriminator.
    /// - Throws: `DecodingError` for a value that is not an object, lacks a discriminator, has an
    ///   unknown one (unless ``PolymorphicFamily/skipsUnknownTypes``), or does not decode as its type; the coding path names the key.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        var members: [String: Family.Member] = [:]
        for key in container.allKeys {
            let slot = try container.decode(Slot.self, forKey: key)
            if let member = slot.member { members[key.stringValue] = member }
        }
        wrappedValue = members
    }

    /// One value; `member` is `nil` for a skipped unknown type.
    private struct Slot: Decodable {
        let member: Family.Member?

        init(from decoder: any Decoder) throws {
            member = try PolymorphicDecoding.member(of: Family.self, from: decoder, skipUnknown: Family.skipsUnknownTypes)
        }
    }
}
