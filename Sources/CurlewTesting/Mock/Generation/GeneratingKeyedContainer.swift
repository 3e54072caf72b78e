import Curlew

/// The keyed container of a ``GeneratingDecoder``: every key is there (unless a hint or the
/// generator's optional policy leaves it out) and every value is invented on request.
struct GeneratingKeyedContainer<Key: CodingKey>: KeyedDecodingContainerProtocol {
    let decoder: GeneratingDecoder

    var codingPath: [any CodingKey] { decoder.codingPath }

    /// For dictionaries (keys that accept any string): `count` keys `"1"`, `"2"`…; for types with
    /// fixed coding keys: the keys generated so far.
    var allKeys: [Key] {
        if case .object(let members) = decoder.node.content, !members.isEmpty {
            return members.keys.sorted().compactMap { Key(stringValue: $0) }
        }
        guard Key(stringValue: "curlew-any-key") != nil else { return [] }
        return (0..<decoder.count).compactMap { Key(stringValue: String($0 + 1)) }
    }

    private func jsonKey(_ key: Key) -> String { decoder.state.jsonKey(key.stringValue) }

    private func child(_ key: Key) -> GeneratingDecoder {
        let child = decoder.child(key: key, jsonKey: jsonKey(key))
        if let forced = decoder.forced[key.stringValue], case .unset = child.node.content {
            child.node.content = .scalar(forced)
        }
        return child
    }

    func contains(_ key: Key) -> Bool {
        if decoder.node.existing(jsonKey(key)) != nil || decoder.forced[key.stringValue] != nil { return true }
        // A recursive model's optionals end its tree (``GeneratingDecoder/truncates``).
        if decoder.truncates { return false }
        let path = decoder.keyPath.isEmpty ? key.stringValue : decoder.keyPath + "." + key.stringValue
        if let hint = decoder.state.generator.overrides[path] ?? decoder.hints[key.stringValue] {
            switch hint.kind {
            case .absent: return false
            case .present, .null: return true
            default: break
            }
        }
        return decoder.state.generator.optionals == .present
    }

    func decodeNil(forKey key: Key) throws -> Bool {
        if let existing = decoder.node.existing(jsonKey(key)) {
            if case .scalar(.null) = existing.content { return true }
            if case .unset = existing.content {} else { return false }
        }
        let child = child(key)
        if let hint = child.hint, case .null = hint.kind {
            child.node.content = .scalar(.null)
            return true
        }
        return false
    }

    func decode<T: Decodable>(_ type: T.Type, forKey key: Key) throws -> T { try child(key).value(T.self) }
    func decode(_ type: Bool.Type, forKey key: Key) throws -> Bool { try child(key).value(type) }
    func decode(_ type: String.Type, forKey key: Key) throws -> String { try child(key).value(type) }
    func decode(_ type: Double.Type, forKey key: Key) throws -> Double { try child(key).value(type) }
    func decode(_ type: Float.Type, forKey key: Key) throws -> Float { try child(key).value(type) }
    func decode(_ type: Int.Type, forKey key: Key) throws -> Int { try child(key).value(type) }
    func decode(_ type: Int8.Type, forKey key: Key) throws -> Int8 { try child(key).value(type) }
    func decode(_ type: Int16.Type, forKey key: Key) throws -> Int16 { try child(key).value(type) }
    func decode(_ type: Int32.Type, forKey key: Key) throws -> Int32 { try child(key).value(type) }
    func decode(_ type: Int64.Type, forKey key: Key) throws -> Int64 { try child(key).value(type) }
    func decode(_ type: UInt.Type, forKey key: Key) throws -> UInt { try child(key).value(type) }
    func decode(_ type: UInt8.Type, forKey key: Key) throws -> UInt8 { try child(key).value(type) }
    func decode(_ type: UInt16.Type, forKey key: Key) throws -> UInt16 { try child(key).value(type) }
    func decode(_ type: UInt32.Type, forKey key: Key) throws -> UInt32 { try child(key).value(type) }
    func decode(_ type: UInt64.Type, forKey key: Key) throws -> UInt64 { try child(key).value(type) }

    func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type, forKey key: Key) throws -> KeyedDecodingContainer<NestedKey> {
        try child(key).container(keyedBy: type)
    }

    func nestedUnkeyedContainer(forKey key: Key) throws -> any UnkeyedDecodingContainer {
        try child(key).unkeyedContainer()
    }

    func superDecoder() throws -> any Decoder {
        decoder.child(key: AnyCodingKey(stringValue: "super"), jsonKey: "super")
    }

    func superDecoder(forKey key: Key) throws -> any Decoder { child(key) }
}
