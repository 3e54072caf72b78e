public import Foundation

extension JSONValue: Codable {
    /// Decodes any JSON value.
    /// - Throws: `DecodingError` when the input is not JSON.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        if container.decodeNil() {
            self = .null
        } else if let flag = try? container.decode(Bool.self) {
            self = .bool(flag)
        } else if let number = try? container.decode(Int.self) {
            self = .int(number)
        } else if let number = try? container.decode(Double.self) {
            self = .double(number)
        } else if let text = try? container.decode(String.self) {
            self = .string(text)
        } else if let array = try? container.decode([JSONValue].self) {
            self = .array(array)
        } else {
            self = .object(try container.decode([String: JSONValue].self))
        }
    }

    /// Decodes JSON text: the value `JSONDecoder().decode(JSONValue.self, from: data)` returns,
    /// read in one pass over the bytes.
    ///
    /// Decoding `JSONValue` through `Decodable` costs the body's size times its nesting (each value
    /// is tried as every type in turn); this reads JSON linearly, with `JSONDecoder`'s results
    /// (its liberties too: a byte order mark, `[1,]`, a repeated key whose first value wins), and
    /// leaves what it cannot decide — UTF-16, nesting deeper than 500, a few huge numbers — to
    /// `JSONDecoder`. Text that is not JSON fails at once with `DecodingError.dataCorrupted`
    /// naming the byte. ``RawResponse/json(at:)`` and decoding a response as `JSONValue` with a
    /// `JSONDecoder` without key or float strategies use it.
    ///
    /// ```swift
    /// let value = try JSONValue(jsonData: Data(#"{"resp":{"code":0}}"#.utf8))
    /// value.resp?.code  // .int(0)
    /// ```
    ///
    /// - Throws: `DecodingError` (from `JSONDecoder`) when `data` is not JSON.
    public init(jsonData data: Data) throws {
        if let value = try Self.parsed(data) {
            self = value
        } else {
            self = try JSONDecoder().decode(JSONValue.self, from: data)
        }
    }

    /// The value of `data` read by ``JSONValueParser``; `nil` when it leaves the text to Foundation.
    /// - Throws: `DecodingError.dataCorrupted` when the text is certainly not JSON.
    static func parsed(_ data: Data) throws(DecodingError) -> JSONValue? {
        switch JSONValueParser.read(data) {
        case .value(let value): value
        case .invalid(let offset): throw JSONValueParser.invalidError(at: offset)
        case .undecided: nil
        }
    }

    /// Encodes the value as it is.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .null: try container.encodeNil()
        case .bool(let flag): try container.encode(flag)
        case .int(let number): try container.encode(number)
        case .double(let number): try container.encode(number)
        case .string(let text): try container.encode(text)
        case .array(let array): try container.encode(array)
        case .object(let object): try container.encode(object)
        }
    }

    /// The value serialized as compact JSON, object keys sorted.
    public var jsonData: Data {
        var writer = JSONWriter(sortedKeys: true)
        writer.write(self)
        return writer.data
    }
}

extension JSONValue: ExpressibleByStringLiteral, ExpressibleByIntegerLiteral, ExpressibleByFloatLiteral,
    ExpressibleByBooleanLiteral, ExpressibleByArrayLiteral, ExpressibleByDictionaryLiteral, ExpressibleByNilLiteral
{
    /// `.string(value)`.
    public init(stringLiteral value: String) { self = .string(value) }
    /// `.int(value)`.
    public init(integerLiteral value: Int) { self = .int(value) }
    /// `.double(value)`.
    public init(floatLiteral value: Double) { self = .double(value) }
    /// `.bool(value)`.
    public init(booleanLiteral value: Bool) { self = .bool(value) }
    /// `.array(elements)`.
    public init(arrayLiteral elements: JSONValue...) { self = .array(elements) }
    /// `.object(…)`; a repeated key keeps its last value.
    public init(dictionaryLiteral elements: (String, JSONValue)...) {
        self = .object(Dictionary(elements, uniquingKeysWith: { _, last in last }))
    }
    /// `.null`.
    public init(nilLiteral: ()) { self = .null }
}

extension JSONValue: CustomStringConvertible {
    /// The value as compact JSON text, object keys sorted: `{"a":[1,"x"]}`.
    public var description: String { String(decoding: jsonData, as: UTF8.self) }
}
