/// Library types whose decoding the generator must steer: an allowed value for ``Scoped``, each
/// family member for ``Polymorphic`` and ``PolymorphicArray``.
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
        if let member = random.pick(Family.members.keys.sorted()) { steered.forced[Family.discriminator] = .string(member) }
        return try Polymorphic(from: steered)
    }
}

extension PolymorphicArray: GenerationHook {
    static func generate(in decoder: GeneratingDecoder) throws -> PolymorphicArray<Family> {
        var steered = decoder
        steered.family = (Family.discriminator, Family.members.keys.sorted())
        return try PolymorphicArray(from: steered)
    }
}
