internal import Curlew

/// A family of types decoded from one JSON shape, chosen by a discriminator field:
/// `{"type": "pic", …}` → `PicObject`, `{"type": "video", …}` →
/// `VideoObject`.
///
/// ```swift
/// protocol Media: Decodable, Sendable {}
/// struct PicObject: Media { var picUrl: String }
/// struct VideoObject: Media { var videoUrl: String }
///
/// enum MediaFamily: PolymorphicFamily {
///     typealias Member = any Media
///     static var discriminator: String { "type" }
///     static var members: [String: any Decodable.Type] { ["pic": PicObject.self, "video": VideoObject.self] }
///     static var skipsUnknownTypes: Bool { true }
/// }
///
/// struct Feed: Decodable, Sendable {
///     @PolymorphicArray<MediaFamily> var items: [any Media]
/// }
/// ```
///
/// Integer discriminators (`"type": 1`) match the key `"1"`.
public protocol PolymorphicFamily {
    /// What every member is seen as, usually an existential such as `any Media`.
    associatedtype Member: Sendable
    /// The field that names the type. Default: `"type"`.
    static var discriminator: String { get }
    /// Discriminator value → the type to decode (each must be a `Member`).
    static var members: [String: any Decodable.Type] { get }
    /// Whether an element whose discriminator is not in ``members`` is left out (`true`) or
    /// fails decoding (`false`: `items[2].type: expected one of pic, video, found "gif"`), in a
    /// ``PolymorphicArray`` or ``PolymorphicDictionary``. Default: `false`.
    static var skipsUnknownTypes: Bool { get }
}

extension PolymorphicFamily {
    /// `"type"`.
    public static var discriminator: String { "type" }
    /// `false`: an unknown type fails decoding.
    public static var skipsUnknownTypes: Bool { false }
}

/// Decodes one member of a family from a decoder positioned at its object.
enum PolymorphicDecoding {
    /// The member, or `nil` for an unknown discriminator when `skipUnknown`.
    static func member<Family: PolymorphicFamily>(
        of family: Family.Type, from decoder: any Decoder, skipUnknown: Bool
    ) throws -> Family.Member? {
        let container = try decoder.container(keyedBy: AnyCodingKey.self)
        let key = AnyCodingKey(stringValue: Family.discriminator)
        let discriminator: String
        if let text = try? container.decode(String.self, forKey: key) {
            discriminator = text
        } else if let number = try? container.decode(Int.self, forKey: key) {
            discriminator = String(number)
        } else {
            // Let the container explain: missing key, null, or wrong type.
            discriminator = try container.decode(String.self, forKey: key)
        }
        let members = Family.members
        guard let type = members[discriminator] else {
            if skipUnknown { return nil }
            let allowed = members.keys.sorted().joined(separator: ", ")
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath + [key], debugDescription: "expected one of \(allowed), found \"\(discriminator)\""))
        }
        let decoded = try type.init(from: decoder)
        guard let member = decoded as? Family.Member else {
            throw DecodingError.dataCorrupted(
                .init(
                    codingPath: decoder.codingPath, debugDescription: "\(type) is not a \(Family.Member.self)"))
        }
        try ValidationHook.validate(decoded, codingPath: decoder.codingPath)
        return member
    }
}

/// Runs `ValidatableModel.validate()` during decoding, where the full coding path is known.
enum ValidationHook {
    static func validate(_ value: Any, codingPath: [any CodingKey]) throws {
        guard let validatable = value as? any ValidatableModel else { return }
        do {
            try validatable.validate()
        } catch let failure as ValidationFailure {
            let path = codingPath + (failure.field.map { [AnyCodingKey(stringValue: $0)] } ?? [])
            throw DecodingError.dataCorrupted(.init(codingPath: path, debugDescription: failure.reason, underlyingError: failure))
        } catch {
            throw DecodingError.dataCorrupted(
                .init(codingPath: codingPath, debugDescription: "\(error)", underlyingError: ValidationFailure("\(error)")))
        }
    }
}
