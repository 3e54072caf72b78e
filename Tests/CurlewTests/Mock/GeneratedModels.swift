import Curlew
import CurlewDecoding
import CurlewTesting
import Foundation

enum GenKind: String, Decodable, Sendable, CaseIterable { case pic, video, gif }
enum GenLevel: Int, Decodable, Sendable, CaseIterable {
    case low = 1
    case mid = 5
    case high = 9
}

struct GenOwner: Decodable, Sendable, Equatable {
    var id: Int
    var name: String
    var email: String
    var avatar: URL
    var nickname: String?
}

struct GenPicture: Decodable, Sendable {
    var id: String
    var title: String
    var imageURL: String
    var createdAt: Date
    var price: Decimal
    var count: Int
    var rating: Double
    var kind: GenKind
    var level: GenLevel
    var uuid: UUID
    var owner: GenOwner
    var tags: [String]
    var caption: String?
}

struct GenGallery: Decodable, Sendable {
    var total: Int
    var pictures: [GenPicture]
    var labels: [String: Int]
}

struct GenLenient: Decodable, Sendable {
    @AutoCast var id: String
    @AutoCast var width: Int
    @AutoCast var isPublic: Bool
    @Default<Int> var likes: Int
    @Default<[String]> var tags: [String]
    @Scoped var kind: GenKind
}

protocol GenMedia: Decodable, Sendable {}
struct GenPic: GenMedia { var picUrl: String }
struct GenVideo: GenMedia { var videoUrl: String; var duration: Int }
enum GenMediaFamily: PolymorphicFamily {
    typealias Member = any GenMedia
    static var members: [String: any Decodable.Type] { ["pic": GenPic.self, "video": GenVideo.self] }
}

struct GenFeed: Decodable, Sendable {
    @PolymorphicArray<GenMediaFamily> var items: [any GenMedia]
    @Polymorphic<GenMediaFamily> var cover: any GenMedia
}

/// Hints the way HAccess's annotations did.
struct GenHinted: Decodable, Sendable, MockHinted {
    var published: String
    var nickname: String?
    var stars: Int
    var mode: String
    var pages: [Int]
    static let mockHints: [String: MockHint] = [
        "published": .date, "nickname": .absent, "stars": .int(1...3), "mode": .oneOf(["a", "b"]), "pages": .count(5),
    ]
}

/// Only widths 1...10 validate; the hint makes it possible.
struct GenValidated: Decodable, Sendable, ValidatableModel, MockHinted {
    var width: Int
    func validate() throws {
        if !(1...10).contains(width) { throw ValidationFailure("expected 1...10, found \(width)", field: "width") }
    }
    static let mockHints: [String: MockHint] = ["width": .int(1...10)]
}

/// A rule no generated value meets.
struct GenImpossible: Decodable, Sendable, ValidatableModel {
    var code: String
    func validate() throws {
        if code != "exactly-this" { throw ValidationFailure("must be exactly-this", field: "code") }
    }
}

struct GenSnake: Decodable, Sendable {
    var createdAt: Date
    var userName: String
}

/// An endpoint in an envelope, with its response deeper in the payload.
struct GenEnveloped: Endpoint {
    typealias Response = [GenOwner]
    var path: String { "owners" }
    var envelope: ResponseEnvelope? { .codeMsgData }
    var keyPath: String? { "owners" }
}

/// HAccess's rule: `status == true && msg == nil`, plus a `kind` that must say `"list"` and a
/// `server` that must be present.
struct GenHAccessRule: Endpoint {
    typealias Response = [GenOwner]
    var path: String { "owners" }
    var envelope: ResponseEnvelope? {
        ResponseEnvelope(codePath: "status", messagePath: "msg", payloadPath: "data", successCodes: ["true"])
            .requiring(.absent("msg"), .oneOf("meta.kind", ["list"]), .present("meta.server"))
    }
}

/// A polymorphic member with its own hints: they apply when it is generated as a member.
struct GenRankedPic: GenMedia, MockHinted {
    var picUrl: String
    var rank: Int
    var caption: String?
    static let mockHints: [String: MockHint] = ["rank": .int(7...7), "caption": .absent]
}

enum GenRankedFamily: PolymorphicFamily {
    typealias Member = any GenMedia
    static var members: [String: any Decodable.Type] { ["ranked": GenRankedPic.self, "video": GenVideo.self] }
}

struct GenRankedFeed: Decodable, Sendable {
    @PolymorphicArray<GenRankedFamily> var items: [any GenMedia]
    @Polymorphic<GenRankedFamily> var cover: any GenMedia
}

/// An endpoint whose response is the feed, plain (no envelope).
struct GenFeedRequest: Endpoint {
    typealias Response = GenRankedFeed
    var path: String { "feed" }
}

/// A response type that is not `Decodable`: a generated mock cannot invent it.
struct GenOpaque: Sendable { var bytes: Int }

struct GenOpaqueRequest: Endpoint {
    typealias Response = GenOpaque
    var path: String { "opaque" }
    func decode(_ response: RawResponse, decoder: JSONDecoder) throws -> GenOpaque { GenOpaque(bytes: response.body.count) }
}

/// Owners without an envelope, for the network path beside a generated mode.
struct GenPlainOwners: Endpoint {
    typealias Response = [GenOwner]
    var path: String { "owners" }
}
