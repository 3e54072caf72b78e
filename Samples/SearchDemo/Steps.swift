import Curlew
import Foundation
import HTTPTypes

/// Describe the endpoint once, send it with one line.
struct SearchStep: TourStep {
    let title = "Search pictures by key"

    func run(with client: APIClient) async throws {
        say(#"try await client.send(SearchRequest(key: "sunset"))"#)
        let page = try await client.send(SearchRequest(key: "sunset")).data
        say("\(page.total) pictures match \"\(page.key)\":")
        for picture in page.pictures {
            say("  #\(picture.id) \(picture.title)  (\(picture.imageURL))")
        }
    }
}

/// Declared, renamed parameters; mixed media decoded from the `resp.data` envelope.
struct MediaSearchStep: TourStep {
    let title = "Search v2: declared parameters, polymorphic results"

    func run(with client: APIClient) async throws {
        let request = MediaSearchRequest(key: "sunset", limit: 3)
        let prepared = try client.prepare(request)
        say(#"MediaSearchRequest(key: "sunset", limit: 3) → GET \#(prepared.url)"#)
        say("X-Client: \(HTTPField.Name("X-Client").flatMap { prepared.headers[$0] } ?? "-")")
        let response = try await client.response(for: request)
        for item in response.value.elements {
            switch item {
            case let pic as PicItem: say("  picture #\(pic.id) \(pic.title) (\(pic.picW)×\(pic.picH), \(pic.picUrl))")
            case let video as VideoItem: say("  video   #\(video.id) \(video.title) (\(video.seconds) s, \(video.videoUrl))")
            default: say("  \(item.title)")
            }
        }
        say("the raw body stays beside the value: \(response.body.count) bytes, resp.code = \(try response.raw.json(at: "resp.code"))")
    }
}

/// `response(for:)` gives the value with status, headers and the raw body.
struct DetailsStep: TourStep {
    let title = "Picture details, with the response around them"

    func run(with client: APIClient) async throws {
        let response = try await client.response(for: PictureRequest(id: 5))
        let picture = response.value.data
        say("\(picture.title) by \(picture.author), \(picture.width)×\(picture.height), tags: \(picture.tags.joined(separator: ", "))")
        say("status \(response.status.code), content-type \(response.headers[.contentType] ?? "?"), \(response.body.count) bytes from the \(response.source)")
    }
}

/// A binary body as `Data`.
struct DownloadStep: TourStep {
    let title = "Download an image"

    func run(with client: APIClient) async throws {
        let search = try await client.send(SearchRequest(key: "bird")).data
        guard let first = search.pictures.first else { return say("no picture to download") }
        let bytes = try await client.send(ImageRequest(path: first.imageURL))
        let isJPEG = bytes.starts(with: [0xFF, 0xD8])
        say("downloaded \(first.imageURL): \(bytes.count) bytes, JPEG marker: \(isJPEG ? "yes" : "no")")
    }
}

/// Sends run outside the client actor, so concurrent requests overlap.
struct ConcurrentStep: TourStep {
    let title = "Fetch five pictures concurrently"

    func run(with client: APIClient) async throws {
        let started = ContinuousClock.now
        let titles = try await withThrowingTaskGroup(of: (Int, String).self) { group in
            for id in 1...5 {
                group.addTask { (id, try await client.send(PictureRequest(id: id)).data.title) }
            }
            return try await group.reduce(into: [Int: String]()) { $0[$1.0] = $1.1 }
        }
        for id in titles.keys.sorted() { say("#\(id) \(titles[id] ?? "")") }
        say("5 requests in \(ContinuousClock.now - started)")
    }
}

/// Every failure is one typed error with a level to switch on.
struct ErrorsStep: TourStep {
    let title = "Typed errors"

    func run(with client: APIClient) async throws {
        do {
            _ = try await client.send(PictureRequest(id: 404))
        } catch let error as CurlewError {
            say("level \(error.level), code \(error.code), HTTP \(error.status?.code ?? 0)")
            say("body snippet: \(error.bodySnippet ?? "-")")
        }
        do {
            _ = try await client.send(ImageRequest(path: "file:///etc/passwd"))
        } catch let error as CurlewError {
            say("level \(error.level), code \(error.code): \(error.message)")
        }
    }
}
