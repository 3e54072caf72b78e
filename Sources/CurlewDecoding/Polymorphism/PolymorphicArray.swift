/// An array whose elements' types are chosen by a discriminator field; see ``PolymorphicFamily``.
/// Elements with an unknown discriminator are skipped or fail, per the family's
/// ``PolymorphicFamily/skipsUnknownTypes``. Use it as a property wrapper or as a response type:
///
/// ```swift
/// struct Feed: Decodable, Sendable {
///     @PolymorphicArray<MediaFamily> var items: [any Media]
/// }
///
/// struct SearchRequest: Endpoint {
///     typealias Response = PolymorphicArray<MediaFamily>
///     var keyPath: String? { "resp.data" }
///     var path: String { "search" }
/// }
/// ```
@propertyWrapper
public struct PolymorphicArray<Family: PolymorphicFamily>: Sendable {
    /// The decoded members, in order.
    public var wrappedValue: [Family.Member]

    /// Wraps members.
    public init(wrappedValue: [Family.Member]) {
        self.wrappedValue = wrappedValue
    }

    /// The decoded members, in order (the same as ``wrappedValue``).
    public var elements: [Family.Member] { wrappedValue }
}

extension PolymorphicArray: Decodable {
    /// Decodes each element by its discriminator.
    /// - Throws: `DecodingError` for an element that is not an object, lacks a discriminator, has
    ///   an unknown one (unless ``PolymorphicFamily/skipsUnknownTypes``), or does not decode as its type.
    public init(from decoder: any Decoder) throws {
        var container = try decoder.unkeyedContainer()
        var members: [Family.Member] = []
        if let count = container.count { members.reserveCapacity(count) }
        while !container.isAtEnd {
            let slot = try container.decode(Slot.self)
            if let member = slot.member { members.append(member) }
        }
        wrappedValue = members
    }

    /// One element; `member` is `nil` for a skipped unknown type.
    private struct Slot: Decodable {
        let member: Family.Member?

        init(from decoder: any Decoder) throws {
            member = try PolymorphicDecoding.member(of: Family.self, from: decoder, skipUnknown: Family.skipsUnknownTypes)
        }
    }
}
