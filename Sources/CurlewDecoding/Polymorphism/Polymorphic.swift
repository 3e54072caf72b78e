/// One value whose concrete type is chosen by a discriminator field; see ``PolymorphicFamily``.
///
/// ```swift
/// struct Post: Decodable, Sendable {
///     @Polymorphic<MediaFamily> var cover: any Media
/// }
/// ```
///
/// An unknown discriminator always fails here (there is nothing to skip to); the member is
/// validated if it is `ValidatableModel`.
@propertyWrapper
public struct Polymorphic<Family: PolymorphicFamily>: Sendable {
    /// The decoded member.
    public var wrappedValue: Family.Member

    /// Wraps a member.
    public init(wrappedValue: Family.Member) {
        self.wrappedValue = wrappedValue
    }
}

extension Polymorphic: Decodable {
    /// Reads the discriminator and decodes the matching member type from the same object.
    /// - Throws: `DecodingError` for a missing or unknown discriminator or a bad member.
    public init(from decoder: any Decoder) throws {
        guard let member = try PolymorphicDecoding.member(of: Family.self, from: decoder, skipUnknown: false) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "unknown member type"))
        }
        wrappedValue = member
    }
}
