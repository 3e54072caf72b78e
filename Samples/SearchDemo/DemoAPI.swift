import Foundation
import LoopbackServer

/// The embedded picture-gallery API the tour talks to, in the spirit of the first seed document:
/// search pictures by key, picture details, an image to download.
enum DemoAPI {
    struct Picture {
        var id: Int
        var title: String
        var author: String
        var tags: [String]
    }

    static let pictures: [Picture] = [
        Picture(id: 1, title: "Sunset over the dunes", author: "Amira", tags: ["sunset", "desert"]),
        Picture(id: 2, title: "Harbour at sunset", author: "Jonas", tags: ["sunset", "sea"]),
        Picture(id: 3, title: "Morning fog", author: "Mei", tags: ["fog", "forest"]),
        Picture(id: 4, title: "Sunset from the ridge", author: "Kofi", tags: ["sunset", "mountain"]),
        Picture(id: 5, title: "Curlew on the mudflats", author: "Ines", tags: ["bird", "coast"]),
    ]

    /// Routes under `/api`.
    static var router: LoopbackRouter {
        var router = LoopbackRouter()
        router.on("GET", "/api/pictures/search") { request, _ in search(request) }
        router.on("GET", "/api/pictures/{id}") { _, parameters in details(parameters["id"]) }
        router.on("GET", "/api/images/{file}") { _, parameters in image(parameters["file"]) }
        router.on("POST", "/api/login") { request, _ in login(request) }
        router.on("GET", "/api/profile") { request, _ in profile(request) }

        router.on("GET", "/api/v2/search") { request, _ in searchV2(request) }

        // The middleware tour (MiddlewareSteps.swift); handlers in DemoAPI+Secure.swift.
        router.on("GET", "/api/secure/orders") { request, _ in signedOrder(request) }
        router.on("GET", "/api/secure/pictures/{id}") { _, parameters in guardedDetails(parameters["id"]) }
        router.on("GET", "/api/secure/me") { request, _ in await account(request) }
        router.on("POST", "/api/auth/refresh") { request, _ in await refresh(request) }
        router.on("GET", "/api/secure/clock") { _, _ in clock() }

        // The files tour (TransferSteps.swift): a generated archive and an upload receiver.
        TransferDemoRoutes.add(to: &router)
        // The resilience tour (ResilienceSteps.swift): slow and failing routes.
        ResilienceDemoRoutes.add(to: &router)

        // The request-path tour (RequestPathSteps.swift): what a request carried.
        router.on("GET", "/api/echo/credentials") { request, _ in
            let auth = request.header("Authorization") ?? "none"
            let session = request.queryValue("session") ?? "none"
            return .json(#"{"authorization":\#(quoted(auth)),"session":\#(quoted(session))}"#)
        }
        return router
    }

    /// Starts the API on 127.0.0.1 with an ephemeral port.
    static func start() async throws -> LoopbackServer {
        let router = Self.router
        return try await LoopbackServer.start { await router.handle($0) }
    }

    private static func search(_ request: ServerRequest) -> ServerResponse {
        let key = request.queryItems.first { $0.name == "key" }?.value ?? ""
        let matches = pictures.filter { picture in
            key.isEmpty || picture.tags.contains(key.lowercased()) || picture.title.lowercased().contains(key.lowercased())
        }
        let items = matches.map { #"{"id":\#($0.id),"title":\#(quoted($0.title)),"image_url":"images/\#($0.id).jpg"}"# }
        return .json(#"{"code":0,"msg":"ok","data":{"key":\#(quoted(key)),"total":\#(matches.count),"pictures":[\#(items.joined(separator: ","))]}}"#)
    }

    /// The v2 search: `?q=…&limit=…`, results of mixed media in a `resp.data` envelope; every
    /// third match is a video, and the client's `X-Client` header is echoed in `resp.client`.
    private static func searchV2(_ request: ServerRequest) -> ServerResponse {
        let key = (request.queryValue("q") ?? "").lowercased()
        let limit = request.queryValue("limit").flatMap(Int.init) ?? 10
        let matches = pictures.filter { key.isEmpty || $0.tags.contains(key) || $0.title.lowercased().contains(key) }.prefix(limit)
        let items = matches.enumerated().map { index, picture in
            index % 3 == 2
                ? #"{"type":"video","id":"\#(picture.id)","title":\#(quoted(picture.title)),"videoUrl":"videos/\#(picture.id).mp4","seconds":"42"}"#
                : #"{"type":"pic","id":\#(picture.id),"title":\#(quoted(picture.title)),"picUrl":"images/\#(picture.id).jpg","picW":1600,"picH":1067}"#
        }
        let client = quoted(request.header("X-Client") ?? "")
        return .json(#"{"resp":{"code":0,"client":\#(client),"data":[\#(items.joined(separator: ","))]}}"#)
    }

    static func details(_ id: String?) -> ServerResponse {
        guard let id = id.flatMap(Int.init), let picture = pictures.first(where: { $0.id == id }) else {
            return .json(#"{"code":404,"msg":"no such picture"}"#, status: 404)
        }
        let tags = picture.tags.map(quoted).joined(separator: ",")
        return .json(#"{"code":0,"msg":"ok","data":{"id":\#(picture.id),"title":\#(quoted(picture.title)),"author":\#(quoted(picture.author)),"width":1600,"height":1067,"tags":[\#(tags)]}}"#)
    }

    private static func image(_ file: String?) -> ServerResponse {
        guard let file, file.hasSuffix(".jpg"), let id = Int(file.dropLast(4)), pictures.contains(where: { $0.id == id }) else {
            return .json(#"{"code":404,"msg":"no such image"}"#, status: 404)
        }
        // A deterministic stand-in for JPEG bytes: SOI marker, then a pattern, then EOI.
        var bytes: [UInt8] = [0xFF, 0xD8, 0xFF, 0xE0]
        bytes += (0..<(48 * 1024)).map { UInt8(truncatingIfNeeded: $0 &* (id + 7)) }
        bytes += [0xFF, 0xD9]
        return ServerResponse(status: 200, headers: [(name: "Content-Type", value: "image/jpeg")], body: bytes)
    }

    /// `POST /api/login` with form fields `user` and `password`; any password but "wrong" works.
    private static func login(_ request: ServerRequest) -> ServerResponse {
        let fields = Dictionary(
            request.bodyText.split(separator: "&").map { pair -> (String, String) in
                let parts = pair.split(separator: "=", maxSplits: 1).map(String.init)
                return (parts.first ?? "", parts.count > 1 ? parts[1] : "")
            }, uniquingKeysWith: { first, _ in first })
        guard let user = fields["user"], !user.isEmpty, fields["password"] != "wrong" else {
            return .json(#"{"code":401,"msg":"wrong user or password"}"#, status: 401)
        }
        return .json(#"{"code":0,"msg":"ok","data":{"token":"token-\#(user)","user":\#(quoted(user))}}"#)
    }

    /// `GET /api/profile` with `Authorization: Bearer token-<user>`.
    private static func profile(_ request: ServerRequest) -> ServerResponse {
        guard let token = request.header("Authorization"), token.hasPrefix("Bearer token-") else {
            return .json(#"{"code":401,"msg":"not logged in"}"#, status: 401)
        }
        let user = String(token.dropFirst("Bearer token-".count))
        return .json(#"{"code":0,"msg":"ok","data":{"user":\#(quoted(user)),"favourites":[1,4,5]}}"#)
    }

    static func quoted(_ text: String) -> String {
        let escaped = text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        return "\"\(escaped)\""
    }
}
