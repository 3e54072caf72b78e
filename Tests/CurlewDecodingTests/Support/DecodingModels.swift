import Curlew
import CurlewDecoding
import CurlewTesting
import Foundation

// The models of CurlewTests' Decoding/DecodingModels.swift that these tests decode (a test target
// sees no other test target's code), and its mock client.

/// A client whose every call is answered with `body` as JSON.
func mockClient(_ body: String) -> APIClient {
    APIClient(baseURL: "https://api.test", transport: MockTransport { .json(body, for: $0) })
}

/// GET with a key path and a response format chosen by the test.
struct FetchAt<Value: Decodable & Sendable>: Endpoint {
    typealias Response = Value
    var path = "p"
    var at: String?
    var format: ResponseFormat = .json
    var keyPath: String? { at }
    var responseFormat: ResponseFormat { format }
}

protocol Media: Decodable, Sendable {}

struct PicObject: Media, ValidatableModel, Equatable {
    var picUrl: String
    var picW: Int
    func validate() throws {
        if picUrl.isEmpty { throw ValidationFailure("must not be empty", field: "picUrl") }
    }
}

struct VideoObject: Media, Equatable {
    var videoUrl: String
    var videoW: Int
}

/// A gallery item that holds media of its own: nested polymorphism.
struct AlbumObject: Media {
    var title: String
    @PolymorphicArray<StrictMedia> var items: [any Media]
}

enum StrictMedia: PolymorphicFamily {
    typealias Member = any Media
    static var members: [String: any Decodable.Type] { ["pic": PicObject.self, "video": VideoObject.self, "album": AlbumObject.self] }
}

enum SkippingMedia: PolymorphicFamily {
    typealias Member = any Media
    static var discriminator: String { "kind" }
    static var members: [String: any Decodable.Type] { ["pic": PicObject.self, "1": VideoObject.self] }
    static var skipsUnknownTypes: Bool { true }
}

enum Kind: String, Decodable, CaseIterable, Sendable { case pic, video }
enum Level: Int, Decodable, CaseIterable, Sendable {
    case low = 1
    case high = 2
}
enum Untitled: DefaultValueProvider { static let defaultValue = "Untitled" }

struct LenientItem: Decodable, Sendable {
    @AutoCast var id: String
    @AutoCast var width: Int
    @AutoCast var rating: Double? = nil
    @AutoCast var isPublic: Bool
    @Default<Int> var likes: Int
    @Default<[String]> var tags: [String]
    @Default<Untitled> var title: String
    @Scoped var kind: Kind
}

struct Owner: Decodable, Sendable, ValidatableModel {
    var name: String
    func validate() throws {
        if name.isEmpty { throw ValidationFailure("must not be empty", field: "name") }
    }
}

struct Album: Decodable, Sendable {
    @Validated var owner: Owner
}
