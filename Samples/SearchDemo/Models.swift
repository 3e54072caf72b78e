import Curlew
import CurlewDecoding

/// The gallery API's envelope: `{"code": 0, "msg": "ok", "data": …}`.
struct Envelope<Payload: Decodable & Sendable>: Decodable, Sendable {
    var code: Int
    var msg: String
    var data: Payload
}

/// One page of search results.
struct SearchPage: Decodable, Sendable {
    var key: String
    var total: Int
    var pictures: [PictureSummary]
}

/// A picture as it appears in search results.
struct PictureSummary: Decodable, Sendable {
    var id: Int
    var title: String
    var imageURL: String

    enum CodingKeys: String, CodingKey {
        case id, title
        case imageURL = "image_url"
    }
}

/// A picture's full details.
struct PictureDetails: Decodable, Sendable {
    var id: Int
    var title: String
    var author: String
    var width: Int
    var height: Int
    var tags: [String]
}

/// What logging in returns.
struct Session: Decodable, Sendable {
    var token: String
    var user: String
}

/// The logged-in user's profile.
struct Profile: Decodable, Sendable {
    var user: String
    var favourites: [Int]
}

/// Anything the v2 search returns.
protocol MediaItem: Decodable, Sendable {
    var title: String { get }
}

/// `{"type":"pic", "id": 1, …}` — the id arrives as a number.
struct PicItem: MediaItem {
    @AutoCast var id: String
    var title: String
    var picUrl: String
    var picW: Int
    var picH: Int
}

/// `{"type":"video", "id": "3", "seconds": "42", …}` — numbers arrive as strings.
struct VideoItem: MediaItem {
    @AutoCast var id: String
    var title: String
    var videoUrl: String
    @AutoCast var seconds: Int
}

/// `type` picks the model; unknown types are skipped.
enum MediaFamily: PolymorphicFamily {
    typealias Member = any MediaItem
    static var members: [String: any Decodable.Type] { ["pic": PicItem.self, "video": VideoItem.self] }
    static var skipsUnknownTypes: Bool { true }
}

/// What a signed order returns, with what the server verified.
struct OrderReceipt: Decodable, Sendable {
    var item: String
    var quantity: Int
    var canonical: String
    var sign: String
}

/// The account behind the bearer token, and how many refreshes the server has served.
struct Account: Decodable, Sendable {
    var user: String
    var token: String
    var refreshes: Int
}
