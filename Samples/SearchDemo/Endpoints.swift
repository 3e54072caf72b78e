import Curlew
import CurlewDecoding
import Foundation
import HTTPTypes

/// `GET /api/pictures/search?key=…&page=…` — one struct per endpoint, declared once.
struct SearchRequest: Endpoint {
    typealias Response = Envelope<SearchPage>
    var key: String
    var page: Int = 1

    var path: String { "pictures/search" }
    var query: [URLQueryItem] {
        [URLQueryItem(name: "key", value: key), URLQueryItem(name: "page", value: String(page))]
    }
}

/// `GET /api/pictures/{id}`.
struct PictureRequest: Endpoint {
    typealias Response = Envelope<PictureDetails>
    var id: Int
    var path: String { "pictures/\(id)" }
}

/// `GET /api/images/{id}.jpg` — the bytes as they arrive.
struct ImageRequest: Endpoint {
    typealias Response = Data
    var path: String
}

/// `POST /api/login` with a form body.
struct LoginRequest: Endpoint {
    typealias Response = Envelope<Session>
    var user: String
    var password: String

    var method: HTTPRequest.Method { .post }
    var path: String { "login" }
    var body: RequestPayload? { .form(["user": user, "password": password]) }
}

/// `GET /api/profile` with the session token.
struct ProfileRequest: Endpoint {
    typealias Response = Envelope<Profile>
    var token: String

    var path: String { "profile" }
    var headers: [String: String] { ["Authorization": "Bearer \(token)"] }
}

/// `GET /api/v2/search?q=…&limit=…` — parameters declared on the properties, renamed for the
/// wire, a header, and mixed media decoded from the `resp.data` part of the envelope.
struct MediaSearchRequest: Endpoint {
    typealias Response = PolymorphicArray<MediaFamily>
    @Query var key: String  // sent as `q`, see parameterNames
    @Query var limit: Int = 10
    @Header("X-Client") var clientName: String? = "curlew-demo"
    var note = "plain properties are not parameters"

    static let parameterNames = ["key": "q"]
    var path: String { "v2/search" }
    var keyPath: String? { "resp.data" }
}

/// `GET /api/secure/orders?item=…&qty=…` — the server only accepts it signed. A call site may add
/// middleware for this one call or skip some of the client's (``RequestOptions``).
struct OrderRequest: Endpoint {
    typealias Response = Envelope<OrderReceipt>
    var item: String
    var quantity: Int

    var path: String { "secure/orders" }
    var query: [URLQueryItem] {
        [URLQueryItem(name: "item", value: item), URLQueryItem(name: "qty", value: String(quantity))]
    }
}

/// The secure part of the demo API: every answer comes in a `{"code", "msg", "data"}` envelope.
/// Declared once for the family, so `Response` is the payload on every client.
protocol SecureGalleryAPI: Endpoint {}

extension SecureGalleryAPI {
    var envelope: ResponseEnvelope? { .codeMsgData }
}

/// `GET /api/secure/pictures/{id}`: the response is the envelope's payload.
struct GalleryPictureRequest: SecureGalleryAPI {
    typealias Response = PictureDetails
    var id: Int
    var path: String { "secure/pictures/\(id)" }
}

/// The same endpoint, declared without the envelope: the body as it arrived, whatever its code.
struct RawGalleryPictureRequest: Endpoint {
    typealias Response = String
    var id: Int
    var path: String { "secure/pictures/\(id)" }
}

/// `GET /api/secure/me` — needs a credential (`AuthorizationMiddleware` adds the header).
struct AccountRequest: SecureGalleryAPI {
    typealias Response = Account
    var path: String { "secure/me" }
    var options: RequestOptions { RequestOptions(requiresAuthentication: true) }
}

/// `GET /api/secure/clock` — only its `Date` header matters.
struct ClockRequest: Endpoint {
    typealias Response = Data
    var path: String { "secure/clock" }
}
