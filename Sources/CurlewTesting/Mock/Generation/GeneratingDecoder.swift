import Curlew
internal import Foundation

/// A `Decoder` that answers every request for a value by inventing one — guided by the coding
/// key's name, the model's ``MockHinted`` hints and the generator's overrides — and records what
/// it invented as JSON, so the same JSON decodes to the same value with the real decoder.
struct GeneratingDecoder: Decoder {
    let state: GenerationState
    let node: GenerationNode
    let codingPath: [any CodingKey]
    /// The dotted path of string keys, without indices: what ``MockGenerator/overrides`` use.
    let keyPath: String
    /// The random path (keys and indices), which makes every value's randomness its own.
    let randomPath: String
    /// The hints of the model this decoder decodes (for its members).
    var hints: [String: MockHint] = [:]
    /// The hint for this value itself (from the parent's key).
    var hint: MockHint?
    /// Members whose value is fixed (a polymorphic member's discriminator).
    var forced: [String: JSONValue] = [:]
    /// For a polymorphic array: the discriminator and the members to cycle through.
    var family: FamilyCycle?
    /// The types being generated around this value, outermost first (``value(_:)``).
    var ancestors: [ObjectIdentifier] = []
    /// Whether the values below are cut short: a recursive model (a comment with replies, a
    /// category with subcategories) gets empty arrays and absent optionals once its type has
    /// repeated ``recursionLimit`` times, so its tree ends.
    var truncates = false

    /// How often a type may enclose itself before its arrays and optionals are left empty.
    static let recursionLimit = 2
    /// The deepest a value may sit: a model that can only end deeper (it requires itself)
    /// fails with `.mockGenerationFailed`.
    static let maximumDepth = 200

    var userInfo: [CodingUserInfoKey: Any] { [:] }

    init(state: GenerationState, node: GenerationNode, codingPath: [any CodingKey] = [], keyPath: String = "", randomPath: String = "") {
        self.state = state
        self.node = node
        self.codingPath = codingPath
        self.keyPath = keyPath
        self.randomPath = randomPath
    }

    /// The decoder for a member.
    func child(key: any CodingKey, jsonKey: String) -> GeneratingDecoder {
        let path = keyPath.isEmpty ? key.stringValue : keyPath + "." + key.stringValue
        var child = GeneratingDecoder(
            state: state, node: node.member(jsonKey), codingPath: codingPath + [key], keyPath: path,
            randomPath: randomPath + "." + key.stringValue)
        child.hint = state.generator.overrides[path] ?? hints[key.stringValue]
        child.ancestors = ancestors
        child.truncates = truncates
        return child
    }

    /// The decoder for an element.
    func element(_ index: Int) -> GeneratingDecoder {
        var child = GeneratingDecoder(
            state: state, node: node.element(index), codingPath: codingPath + [AnyCodingKey(intValue: index)], keyPath: keyPath,
            randomPath: randomPath + "[\(index)]")
        if let hint, case .count = hint.kind {} else { child.hint = hint }
        child.ancestors = ancestors
        child.truncates = truncates
        if let family, !family.members.isEmpty {
            let member = index % family.members.count
            child.forced[family.discriminator] = .string(family.members[member])
            child.hints = family.hints[member]
        }
        return child
    }

    /// The element count for an array or dictionary here.
    var count: Int {
        if truncates { return 0 }
        if let hint, case .count(let count) = hint.kind { return count }
        return max(state.generator.arrayCount, family?.members.count ?? 0)
    }

    /// The name guiding guesses: the nearest string key.
    var name: String {
        codingPath.last(where: { $0.intValue == nil })?.stringValue ?? ""
    }

    /// The guess for this value: the hint's, else the name's.
    var guess: ValueGuess {
        if let hint, case .guess(let guess) = hint.kind { return guess }
        return ValueGuess.forKey(name)
    }

    var random: SeededRandom { state.random(randomPath) }

    func container<Key: CodingKey>(keyedBy type: Key.Type) throws -> KeyedDecodingContainer<Key> {
        switch node.content {
        case .unset: node.content = .object([:])
        case .object: break
        case .array, .scalar:
            throw DecodingError.typeMismatch([String: Any].self, .init(codingPath: codingPath, debugDescription: "already generated as another shape"))
        }
        return KeyedDecodingContainer(GeneratingKeyedContainer<Key>(decoder: self))
    }

    func unkeyedContainer() throws -> any UnkeyedDecodingContainer {
        switch node.content {
        case .unset: node.content = .array([])
        case .array: break
        case .object, .scalar:
            throw DecodingError.typeMismatch([Any].self, .init(codingPath: codingPath, debugDescription: "already generated as another shape"))
        }
        return GeneratingUnkeyedContainer(decoder: self)
    }

    func singleValueContainer() throws -> any SingleValueDecodingContainer {
        GeneratingSingleValueContainer(decoder: self)
    }
}
