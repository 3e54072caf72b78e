import Curlew
import Foundation

/// `GET /api/pictures/search?key=…&page=…` — one struct per endpoint, declared once.
struct SearchRequest: Request {
    typealias Response = Envelope<SearchPage>
    var key: String
    var page: Int = 1

    var path: String { "pictures/search" }
    var query: [URLQueryItem] {
        [URLQueryItem(name: "key", value: key), URLQueryItem(name: "page", value: String(page))]
    }
}

/// `GET /api/pictures/{id}`.
struct PictureRequest: Request {
    typealias Response = Envelope<PictureDetails>
    var id: Int
    var path: String { "pictures/\(id)" }
}

/// `GET /api/images/{id}.jpg` — the bytes as they arrive.
struct ImageRequest: Request {
    typealias Response = Data
    var path: String
}
