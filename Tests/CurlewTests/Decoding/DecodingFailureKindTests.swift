import Foundation
import Testing

@testable import Curlew
@testable import CurlewCore

/// FuzzJSONScanner found a 2 KB body nested 96 deep that took 350 ms to explain a type mismatch:
/// the explanation ("found string") decoded a tree of probes by trial, which grew with nesting
/// times size, and the body is the server's. The kind is now read by scanning the bytes; these
/// are the answers it must give.
@Suite struct DecodingFailureKindTests {
    /// A coding key as a decoder gives them: a name, an index, or an `Int`-backed name.
    private struct Key: CodingKey {
        var stringValue: String
        var intValue: Int?
        init(stringValue: String) { self.stringValue = stringValue }
        init(intValue: Int) { (self.stringValue, self.intValue) = ("Index \(intValue)", intValue) }
        init(_ name: String, int: Int) { (self.stringValue, self.intValue) = (name, int) }
    }

    @Test func theKindAtACodingPathIsReadFromTheBytes() {
        let body = Data(#" {"a": [1, "x", {"b": null}, true, [], -2], "c": {"d": 2.5}, "7": false} "#.utf8)
        let cases: [([any CodingKey], String?)] = [
            ([], "object"),
            ([Key(stringValue: "a")], "array"),
            ([Key(stringValue: "a"), Key(intValue: 0)], "number"),
            ([Key(stringValue: "a"), Key(intValue: 1)], "string"),
            ([Key(stringValue: "a"), Key(intValue: 2), Key(stringValue: "b")], "null"),
            ([Key(stringValue: "a"), Key(intValue: 3)], "bool"),
            ([Key(stringValue: "a"), Key(intValue: 4)], "array"),
            ([Key(stringValue: "a"), Key(intValue: 5)], "number"),
            ([Key(stringValue: "c"), Key(stringValue: "d")], "number"),
            // An `Int`-backed key meeting an object is looked up by its name, as the decoder does.
            ([Key("7", int: 7)], "bool"),
            ([Key(stringValue: "missing")], nil),
            ([Key(stringValue: "a"), Key(intValue: 6)], nil),
            ([Key(stringValue: "a"), Key(stringValue: "b")], nil),
            ([Key(stringValue: "c"), Key(stringValue: "d"), Key(intValue: 0)], nil),
        ]
        for (path, kind) in cases {
            #expect(DecodingFailure.kindOfValue(at: path, in: body) == kind, "\(path.map(\.stringValue))")
        }
        #expect(DecodingFailure.kindOfValue(at: [], in: Data("  ".utf8)) == nil)
    }

    @Test func theKindAtTheBottomOfDeepNestingIsFound() {
        let depth = 2_000
        let body = Data((String(repeating: "[", count: depth) + #""x""# + String(repeating: "]", count: depth)).utf8)
        #expect(DecodingFailure.kindOfValue(at: Array(repeating: Key(intValue: 0), count: depth), in: body) == "string")
        #expect(DecodingFailure.kindOfValue(at: Array(repeating: Key(intValue: 0), count: depth - 1), in: body) == "array")
        #expect(DecodingFailure.kindOfValue(at: Array(repeating: Key(intValue: 0), count: depth + 1), in: body) == nil)
    }

    /// The message a type mismatch deep in nested arrays gets, end to end.
    @Test func aTypeMismatchInNestedArraysNamesWhatWasFound() throws {
        let body = Data(#"[[1, 2], [3, [4, "five"]]]"#.utf8)
        let error = #expect(throws: DecodingError.self) { try JSONDecoder().decode([[Int]].self, from: body) }
        let failure = try #require(error.map { DecodingFailure($0, body: body) })
        #expect(failure.message == "[1][1]: expected Int, found array")
    }

    /// FuzzJSONScanner: `[\0]\0-` is `[]` to Foundation's decoder, which guesses UTF-16 from the
    /// zero bytes; the key-path scanner reads JSON as UTF-8 only (RFC 8259 §8.1), so a key path
    /// into such a body is a typed decoding error (the zero byte it finds does not decode).
    @Test func aKeyPathIntoAUTF16BodyIsATypedError() throws {
        let body = Data([0x5B, 0x00, 0x5D, 0x00, 0x2D])
        #expect(try JSONDecoder().decode([Int].self, from: body) == [])
        let raw = RawResponse(status: .ok, body: body, url: "https://example.com/")
        let error = #expect(throws: CurlewError.self) { try raw.json(at: "[0]") }
        #expect(error?.code == .decodingFailed)
        #expect(error?.message == "[0]: data corrupted: The given data was not valid JSON.")
    }
}
