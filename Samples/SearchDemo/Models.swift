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
