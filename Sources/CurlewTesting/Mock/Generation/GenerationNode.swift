import Curlew

/// One value of the JSON being generated, filled in while the generating decoder walks the type.
/// A reference, so containers asked twice for the same place (a polymorphic member decoded after
/// its discriminator was read) see what was already invented.
final class GenerationNode {
    enum Content {
        case unset
        case object([String: GenerationNode])
        case array([GenerationNode])
        case scalar(JSONValue)
    }

    var content: Content = .unset

    /// The member `key` of an object node, created when missing.
    func member(_ key: String) -> GenerationNode {
        if case .object(var members) = content {
            if let existing = members[key] { return existing }
            let node = GenerationNode()
            members[key] = node
            content = .object(members)
            return node
        }
        let node = GenerationNode()
        content = .object([key: node])
        return node
    }

    /// The existing member `key`, if any.
    func existing(_ key: String) -> GenerationNode? {
        if case .object(let members) = content { return members[key] }
        return nil
    }

    /// The element at `index` of an array node, created (with the ones before it) when missing.
    func element(_ index: Int) -> GenerationNode {
        var elements: [GenerationNode] = []
        if case .array(let existing) = content { elements = existing }
        while elements.count <= index { elements.append(GenerationNode()) }
        content = .array(elements)
        return elements[index]
    }

    /// The JSON made so far; an untouched node is an empty object (a type that read nothing).
    var json: JSONValue {
        switch content {
        case .unset: .object([:])
        case .object(let members): .object(members.mapValues(\.json))
        case .array(let elements): .array(elements.map(\.json))
        case .scalar(let value): value
        }
    }
}
