import Curlew

/// The unkeyed container of a ``GeneratingDecoder``: ``GeneratingDecoder/count`` elements (a
/// polymorphic array cycles through its family's members).
struct GeneratingUnkeyedContainer: UnkeyedDecodingContainer {
    let decoder: GeneratingDecoder
    private(set) var currentIndex = 0
    private let total: Int

    init(decoder: GeneratingDecoder) {
        self.decoder = decoder
        if case .array(let existing) = decoder.node.content, !existing.isEmpty {
            total = existing.count
        } else {
            total = decoder.count
        }
    }

    var codingPath: [any CodingKey] { decoder.codingPath }
    var count: Int? { total }
    var isAtEnd: Bool { currentIndex >= total }

    private mutating func next() throws -> GeneratingDecoder {
        guard !isAtEnd else {
            throw DecodingError.valueNotFound(Any.self, .init(codingPath: codingPath, debugDescription: "the array has \(total) elements"))
        }
        defer { currentIndex += 1 }
        return decoder.element(currentIndex)
    }

    mutating func decodeNil() throws -> Bool {
        guard !isAtEnd else { return true }
        let element = decoder.element(currentIndex)
        if case .scalar(.null) = element.node.content {
            currentIndex += 1
            return true
        }
        if let hint = element.hint, case .null = hint.kind {
            element.node.content = .scalar(.null)
            currentIndex += 1
            return true
        }
        return false
    }

    mutating func decode<T: Decodable>(_ type: T.Type) throws -> T { try next().value(T.self) }
    mutating func decode(_ type: Bool.Type) throws -> Bool { try next().value(type) }
    mutating func decode(_ type: String.Type) throws -> String { try next().value(type) }
    mutating func decode(_ type: Double.Type) throws -> Double { try next().value(type) }
    mutating func decode(_ type: Float.Type) throws -> Float { try next().value(type) }
    mutating func decode(_ type: Int.Type) throws -> Int { try next().value(type) }
    mutating func decode(_ type: Int8.Type) throws -> Int8 { try next().value(type) }
    mutating func decode(_ type: Int16.Type) throws -> Int16 { try next().value(type) }
    mutating func decode(_ type: Int32.Type) throws -> Int32 { try next().value(type) }
    mutating func decode(_ type: Int64.Type) throws -> Int64 { try next().value(type) }
    mutating func decode(_ type: UInt.Type) throws -> UInt { try next().value(type) }
    mutating func decode(_ type: UInt8.Type) throws -> UInt8 { try next().value(type) }
    mutating func decode(_ type: UInt16.Type) throws -> UInt16 { try next().value(type) }
    mutating func decode(_ type: UInt32.Type) throws -> UInt32 { try next().value(type) }
    mutating func decode(_ type: UInt64.Type) throws -> UInt64 { try next().value(type) }

    mutating func nestedContainer<NestedKey: CodingKey>(keyedBy type: NestedKey.Type) throws -> KeyedDecodingContainer<NestedKey> {
        try next().container(keyedBy: type)
    }

    mutating func nestedUnkeyedContainer() throws -> any UnkeyedDecodingContainer {
        try next().unkeyedContainer()
    }

    mutating func superDecoder() throws -> any Decoder { try next() }
}
