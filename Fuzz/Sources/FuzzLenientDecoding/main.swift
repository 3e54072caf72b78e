import Foundation
import FuzzSupport
@testable import Curlew
import CurlewDecoding
@testable import CurlewCore

protocol FuzzMedia: Decodable, Sendable {}
struct FuzzPicture: FuzzMedia { var url: String; @AutoCast var width: Int }
struct FuzzVideo: FuzzMedia { var url: String; @Default<Int> var seconds: Int }

enum FuzzMediaFamily: PolymorphicFamily {
    typealias Member = any FuzzMedia
    static var discriminator: String { "type" }
    static var members: [String: any Decodable.Type] { ["pic": FuzzPicture.self, "1": FuzzVideo.self] }
    static var skipsUnknownTypes: Bool { true }
}

enum FuzzKind: String, Decodable, CaseIterable, Sendable { case pic, video }

/// Every lenient and polymorphic wrapper in one model.
struct FuzzModel: Decodable, Sendable {
    @AutoCast var count: Int
    @AutoCast var big: Int64
    @AutoCast var ratio: Double
    @AutoCast var label: String
    @AutoCast var maybe: Int?
    @Default<Int> var likes: Int
    @Default<[String]> var tags: [String]
    @AutoCast var flag: Bool
    @Scoped var kind: FuzzKind
    @Polymorphic<FuzzMediaFamily> var cover: any FuzzMedia
    @PolymorphicArray<FuzzMediaFamily> var items: [any FuzzMedia]
    var extra: JSONValue?
}

/// Input: arbitrary JSON. Decodes it as `JSONValue` (through `Decodable` and through the linear
/// parser, which must agree or step aside), as a model using every lenient and polymorphic
/// wrapper (directly and under a key path), and re-encodes what decoded.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzLenientDecoding(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    let body = start.map { Data(bytes: $0, count: count) } ?? Data()
    let decoder = JSONDecoder()
    // JSONValue's linear parser must read exactly what the Decodable conformance reads, or step aside.
    let decoded = try? decoder.decode(JSONValue.self, from: body)
    if let parsed = JSONValueParser.parse(body) {
        fuzzCheck(parsed == decoded, "the parser reads \(parsed) where JSONDecoder reads \(decoded.map(\.description) ?? "an error")")
    }
    fuzzCheck((try? JSONValue(jsonData: body)) == decoded, "JSONValue(jsonData:) differs from JSONDecoder")
    if let value = decoded {
        _ = value.intValue
        _ = value.stringValue
        if let encoded = try? JSONEncoder().encode(value) {
            let again = try? decoder.decode(JSONValue.self, from: encoded)
            fuzzCheck(again != nil, "re-encoded JSONValue does not decode: \(String(decoding: encoded, as: UTF8.self))")
        }
    }
    _ = try? decoder.decode(FuzzModel.self, from: body)
    _ = try? decoder.decode([FuzzModel].self, from: body)
    _ = try? decoder.decode(PolymorphicArray<FuzzMediaFamily>.self, from: body)
    let raw = RawResponse(status: .ok, body: body, url: "https://example.com/")
    _ = try? raw.decode(FuzzModel.self, at: "data")
    _ = try? raw.decode([String: AutoCast<Double>].self)
    _ = try? raw.decode([AutoCast<Bool>].self, at: "flags")
    return 0
}

runFuzzer(fuzzLenientDecoding)
