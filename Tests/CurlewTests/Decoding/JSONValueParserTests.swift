@testable import Curlew
@testable import CurlewCore
import Foundation
import Testing
import TestSupport

/// `JSONValueParser` reads strict JSON linearly and must give exactly what
/// `JSONDecoder().decode(JSONValue.self, from:)` gives; everything else it leaves to Foundation.
@Suite("JSONValue's linear parser")
struct JSONValueParserTests {
    static func foundation(_ data: Data, decoder: JSONDecoder = JSONDecoder()) -> JSONValue? {
        try? decoder.decode(JSONValue.self, from: data)
    }

    /// Inputs the parser reads, with what Foundation reads for them (measured on Swift 6.3's
    /// swift-foundation; the test also checks Foundation still agrees).
    static let read: [(String, JSONValue)] = [
        ("1", .int(1)), (" 1 ", .int(1)), ("-0", .int(0)), ("0", .int(0)),
        ("1.0", .int(1)), ("1e2", .int(100)), ("1E+2", .int(100)), ("0.1e1", .int(1)), ("-0.0", .int(0)),
        ("1.0000000000000000001", .int(1)), ("1e-400", .int(0)), ("-1e-400", .int(0)), ("0e1000000", .int(0)),
        ("1.5", .double(1.5)), ("1e300", .double(1e300)), ("-1e300", .double(-1e300)), ("-2.25e-3", .double(-0.00225)), ("1e22", .double(1e22)),
        ("4.9406564584124654e-324", .double(.leastNonzeroMagnitude)),
        ("9223372036854775807", .int(.max)), ("-9223372036854775808", .int(.min)),
        ("9223372036854775808", .double(9_223_372_036_854_775_808)), ("9223372036854775807.0", .double(9_223_372_036_854_775_808)),
        ("123456789012345678901234567890", .double(1.2345678901234568e29)),
        ("9007199254740993", .int(9_007_199_254_740_993)),
        ("true", .bool(true)), ("false", .bool(false)), ("null", .null),
        (#""""#, .string("")), (#""a\"b\\c\/d\b\f\n\r\t""#, .string("a\"b\\c/d\u{8}\u{C}\n\r\t")),
        (#""\u00e9\ud83d\ude00\u0000""#, .string("é😀\u{0}")), ("\"é😀\u{7F}\"", .string("é😀\u{7F}")),
        ("[]", .array([])), ("{}", .object([:])), (" [ ] ", .array([])),
        (#"{"a":[1,{"b":null}],"c":"d"}"#, .object(["a": .array([.int(1), .object(["b": .null])]), "c": .string("d")])),
        ("[1,\n\t2 ,\r3]", .array([.int(1), .int(2), .int(3)])),
        // Foundation's liberties: one comma before a closing bracket, a byte order mark, a repeated key (the first wins).
        ("[1,]", .array([.int(1)])), ("[[1 , ],\n]", .array([.array([.int(1)])])), (#"{"a":{"b":2,},}"#, .object(["a": .object(["b": .int(2)])])),
        ("\u{FEFF}1", .int(1)), ("\u{FEFF} [1]", .array([.int(1)])),
        (#"{"a":1,"a":2,"b":{"c":1,"c":[2]}}"#, .object(["a": .int(1), "b": .object(["c": .int(1)])])),
        ("[{\"é\":1,\"e\u{301}\":2}]", .array([.object(["é": .int(1)])])),
    ]

    @Test(arguments: read.indices)
    func readsWhatFoundationReads(_ index: Int) throws {
        let (text, expected) = Self.read[index]
        let data = Data(text.utf8)
        #expect(JSONValueParser.parse(data) == expected, "\(text)")
        #expect(Self.foundation(data) == expected, "Foundation reads \(text) differently now")
        #expect(try JSONValue(jsonData: data) == expected)
    }

    /// Inputs Foundation refuses too: the parser says so at once.
    static let invalid: [String] = [
        "", " ", "01", "-", "1.", ".5", "+1", "1e", "NaN", "tru", "nul", "[1] x", #"{"a" 1}"#, #"{"a":}"#, "[1 2]",
        "{1:2}", #""\ud800""#, #""\udc00\ud800""#, #""\ud800\u0041""#, #""\x""#, #""\u12""#, "\"a\u{1}\"", "\"abc",
        "[", "{\"a\":[}", "]", "[,]", "[1,,]", "{,}", #"{"a":1,,}"#, "[1,]x", "\u{FEFF}\u{FEFF}1", "\u{FEFF}", " \u{FEFF}1",
        // Found only while decoding by Foundation, after the trial decoding of everything above them.
        "[1,01]", "[-01]", "[1.5e]", "[1e5.0]", #"[1,"\ud800"]"#, #"{"a":[0,[1,[05]]]}"#,
        // A repeated key's value is skipped by Foundation, but the key and what follows the value are read.
        "{\"a\":1,\"a\":1,,}", #"{"a":1,"a":[2],"b":05}"#,
    ]

    @Test(arguments: invalid)
    func refusesAtOnceWhatFoundationRefuses(_ text: String) {
        let data = Data(text.utf8)
        guard case .invalid(let offset) = JSONValueParser.read(data) else {
            Issue.record("\(text.debugDescription) read as \(JSONValueParser.read(data))")
            return
        }
        #expect(offset <= data.count)
        #expect(Self.foundation(data) == nil)
        #expect(throws: DecodingError.self) { try JSONValue(jsonData: data) }
    }

    /// Inputs left to Foundation, which reads some of them in its own way and refuses the others.
    static let undecided: [String] = [
        // Whole numbers from 2^53 up written with a fraction or exponent: Foundation reads them through Decimal.
        "12345678901234567.5", "9007199254740993.0", "-9223372036854775809",
        // Beyond Double.
        "1E400", "-1e309",
        // UTF-16 (Foundation guesses it from the zero byte).
        "1\u{0}",
        // The value of a repeated key, which Foundation skips without decoding it.
        #"{"a":1,"a":05}"#, "{\"a\":1,\"a\":\"\u{1}\"}", #"{"a":1,"a":{"b":"\ud800"}}"#, #"{"a":1,"a":1E400}"#,
        // Refused by Foundation's scanner, but inside a skipped value the parser does not decide.
        "{\"a\":1,\"a\":[1 2]}", "{\"a\":1,\"a\":tru}",
    ]

    @Test(arguments: undecided)
    func leavesTheRestToFoundation(_ text: String) {
        let data = Data(text.utf8)
        #expect(JSONValueParser.read(data) == .undecided)
        #expect((try? JSONValue(jsonData: data)) == Self.foundation(data))
    }

    @Test func aRepeatedKeysSkippedValueIsReadByFoundation() throws {
        #expect(try JSONValue(jsonData: Data(#"{"a":1,"a":05,"b":[2]}"#.utf8)) == .object(["a": .int(1), "b": .array([.int(2)])]))
        // After the skipped value, the parser is certain again.
        #expect(JSONValueParser.read(Data(#"{"a":1,"a":[2],"b":05}"#.utf8)) == .invalid(at: 21))
    }

    @Test func invalidUTF8IsRefusedAndUTF16LeftToFoundation() throws {
        for bytes: [UInt8] in [
            [0x22, 0xFF, 0x22], [0x22, 0xC3, 0x22], [0x22, 0xED, 0xA0, 0x80, 0x22], [0x22, 0xC0, 0xAF, 0x22], [0x22, 0xC3, 0x5C, 0x6E, 0x22],
            Array(#"{"a":1,""#.utf8) + [0xFF] + Array(#"":2}"#.utf8),
        ] {
            guard case .invalid = JSONValueParser.read(Data(bytes)) else {
                Issue.record("\(bytes) read as \(JSONValueParser.read(Data(bytes)))")
                continue
            }
            #expect(Self.foundation(Data(bytes)) == nil, "\(bytes)")
        }
        let utf16 = Data("[1]".utf16.flatMap { [UInt8($0 & 0xFF), UInt8($0 >> 8)] })
        #expect(JSONValueParser.read(utf16) == .undecided)
        #expect(try JSONValue(jsonData: utf16) == .array([.int(1)]))
        #expect(JSONValueParser.read(Data([0xFF, 0xFE, 0x31])) == .undecided)
    }

    @Test func nestingUpToTheLimitIsReadAndDeeperIsLeftToFoundation() throws {
        func nested(_ depth: Int) -> Data {
            Data((String(repeating: #"{"a":["#, count: depth) + "1" + String(repeating: "]}", count: depth)).utf8)
        }
        // Each level is two containers.
        let deepest = nested(JSONValueParser.maximumDepth / 2)
        let value = try #require(JSONValueParser.parse(deepest))
        #expect(value == Self.foundation(deepest))
        #expect(JSONValueParser.parse(nested(JSONValueParser.maximumDepth / 2 + 1)) == nil)
        let tooDeep = Data((String(repeating: "[", count: 600) + String(repeating: "]", count: 600)).utf8)
        #expect(throws: DecodingError.self) { try JSONValue(jsonData: tooDeep) }
    }

    @Test func aBodyIsReadTheSameThroughEveryEntryPoint() async throws {
        let body = #"{"resp":{"code":0,"items":[{"id":1,"price":9.5,"tags":["a","é"]},{"id":2,"price":10.0,"tags":[]}]},"ok":true}"#
        let raw = RawResponse(status: .ok, body: Data(body.utf8), url: "https://api.test/x")
        let expected = try #require(Self.foundation(raw.body))
        #expect(try raw.json() == expected)
        #expect(try raw.decode(JSONValue.self) == expected)
        #expect(try raw.json(at: "resp.items[1]") == expected.resp?.items?[1])
        #expect(expected.resp?.items?[1]?.price == .int(10))
        let sent = try await mockClient(body).send(Fetch<JSONValue>(path: "x"))
        #expect(sent == expected)
    }

    @Test func aDecoderWithStrategiesDecidesItself() throws {
        let raw = RawResponse(status: .ok, body: Data(#"{"user_name":"inf","list":[{"first_key":1}]}"#.utf8), url: "https://api.test/x")
        let decoder = JSONDecoder()
        decoder.keyDecodingStrategy = .convertFromSnakeCase
        decoder.nonConformingFloatDecodingStrategy = .convertFromString(positiveInfinity: "inf", negativeInfinity: "-inf", nan: "NaN")
        #expect(!JSONValueParser.readsLike(decoder))
        #expect(JSONValueParser.readsLike(JSONDecoder()))
        let expected = try #require(Self.foundation(raw.body, decoder: decoder))
        #expect(try raw.decode(JSONValue.self, decoder: decoder) == expected)
        // What Foundation makes of them: the string "inf" is a Double (the parser would keep the string).
        #expect(expected.objectValue?.values.contains(.double(.infinity)) == true)
        #expect(try raw.json() != expected)
    }
}
