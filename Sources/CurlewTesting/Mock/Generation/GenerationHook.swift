import Curlew
import CurlewDecoding

/// Library types whose decoding the generator must steer: an allowed value for `Scoped`, each
/// family member for `Polymorphic` and `PolymorphicArray`.
protocol GenerationHook {
    static func generate(in decoder: GeneratingDecoder) throws -> Self
}

extension Scoped: GenerationHook {
    static func generate(in decoder: GeneratingDecoder) throws -> Scoped<Value> {
        var random = decoder.random
        guard let chosen = random.pick(Array(Value.allCases)) else {
            throw DecodingError.dataCorrupted(.init(codingPath: decoder.codingPath, debugDescription: "\(Value.self) has no cases"))
        }
        if let raw = GeneratingDecoder.json(chosen.rawValue) { decoder.node.content = .scalar(raw) }
        return Scoped(wrappedValue: chosen)
    }
}

extension Polymorphic: GenerationHook {
    static func generate(in decoder: GeneratingDecoder) throws -> Polymorphic<Family> {
        var random = decoder.random
        var steered = decoder
        if let member = random.pick(Family.members.keys.sorted()) {
            steered.forced[Family.discriminator] = .string(member)
            steered.hints = GeneratingDecoder.hints(of: Family.members[member])
        }
        return try Polymorphic(from: steered)
    }
}

extension PolymorphicArray: GenerationHook {
    static func generate(in decoder: GeneratingDecoder) throws -> PolymorphicArray<Family> {
        var steered = decoder
        let members = Family.members
        let names = members.keys.sorted()
        steered.family = GeneratingDecoder.FamilyCycle(
            discriminator: Family.discriminator, members: names, hints: names.map { GeneratingDecoder.hints(of: members[$0]) })
        return try PolymorphicArray(from: steered)
    }
}

extension GeneratingDecoder {
    /// A family's members in turn: element *i* gets member `i % members.count`, with that
    /// member type's ``MockHinted`` hints.
    struct FamilyCycle {
        let discriminator: String
        let members: [String]
        let hints: [[String: MockHint]]
    }

    /// The ``MockHinted`` hints of a member type (none for an unhinted or unknown type), so a
    /// polymorphic member is generated as if decoded as its own type.
    static func hints(of type: (any Decodable.Type)?) -> [String: MockHint] {
        (type as? any MockHinted.Type)?.mockHints ?? [:]
    }
}
