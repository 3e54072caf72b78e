import Curlew

/// The single-value container of a ``GeneratingDecoder``: present (not `null`) unless a hint
/// says otherwise; values are invented by their type and the nearest key's name.
struct GeneratingSingleValueContainer: SingleValueDecodingContainer {
    let decoder: GeneratingDecoder

    var codingPath: [any CodingKey] { decoder.codingPath }

    func decodeNil() -> Bool {
        if case .scalar(.null) = decoder.node.content { return true }
        if case .unset = decoder.node.content, let hint = decoder.hint, case .null = hint.kind {
            decoder.node.content = .scalar(.null)
            return true
        }
        return false
    }

    func decode<T: Decodable>(_ type: T.Type) throws -> T { try decoder.value(T.self) }
    func decode(_ type: Bool.Type) throws -> Bool { try decoder.value(type) }
    func decode(_ type: String.Type) throws -> String { try decoder.value(type) }
    func decode(_ type: Double.Type) throws -> Double { try decoder.value(type) }
    func decode(_ type: Float.Type) throws -> Float { try decoder.value(type) }
    func decode(_ type: Int.Type) throws -> Int { try decoder.value(type) }
    func decode(_ type: Int8.Type) throws -> Int8 { try decoder.value(type) }
    func decode(_ type: Int16.Type) throws -> Int16 { try decoder.value(type) }
    func decode(_ type: Int32.Type) throws -> Int32 { try decoder.value(type) }
    func decode(_ type: Int64.Type) throws -> Int64 { try decoder.value(type) }
    func decode(_ type: UInt.Type) throws -> UInt { try decoder.value(type) }
    func decode(_ type: UInt8.Type) throws -> UInt8 { try decoder.value(type) }
    func decode(_ type: UInt16.Type) throws -> UInt16 { try decoder.value(type) }
    func decode(_ type: UInt32.Type) throws -> UInt32 { try decoder.value(type) }
    func decode(_ type: UInt64.Type) throws -> UInt64 { try decoder.value(type) }
}
