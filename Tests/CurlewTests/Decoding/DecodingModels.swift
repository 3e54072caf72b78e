import Curlew
import CurlewDecoding
import Foundation
import HTTPTypes

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

struct Ranged: Decodable, Sendable, ValidatableModel {
    var id: String
    var width: Int
    func validate() throws {
        if id.isEmpty { throw ValidationFailure("must not be empty", field: "id") }
        if !(1...10_000).contains(width) { throw ValidationFailure("expected 1...10000, found \(width)", field: "width") }
    }
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
