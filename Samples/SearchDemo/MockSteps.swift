import Curlew
import CurlewTesting
import Foundation

/// Mocks from fixture files: the same request, answered from `SearchRequest.json` and its
/// scenarios through the whole request path, with nothing sent.
struct FixtureMockStep: TourStep {
    let title = "Mocks: answer from fixture files named after the request type (nothing is sent)"

    func run(with client: APIClient) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-demo-fixtures-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fixture = #"{"code": 0, "msg": "ok", "data": {"key": "sunset", "total": 1, "pictures": [{"id": 1, "title": "From a fixture", "image_url": "https://images.example.com/1.jpg"}]}}"#
        try fixture.write(toFile: directory + "/SearchRequest.json", atomically: true, encoding: .utf8)
        try #"{"error": "cannotConnect"}"#.write(toFile: directory + "/SearchRequest.offline.meta.json", atomically: true, encoding: .utf8)
        let store = try FixtureStore(directory: directory)

        let response = try await client.response(for: SearchRequest(key: "sunset")) { $0.mock = .fixtures(store) }
        say("SearchRequest → \(response.value.data.pictures.map(\.title)) from \(response.source)")
        do {
            _ = try await client.send(SearchRequest(key: "sunset")) {
                $0.mock = .fixtures(store); $0.mockScenario = "offline"
            }
            throw TourExpectationFailed(description: "the offline scenario answered")
        } catch let error as CurlewError where error.code == .cannotConnect {
            say("scenario \"offline\" (SearchRequest.offline.meta.json) → simulated \(error.code), stage \(error.stage.map { "\($0)" } ?? "?")")
        }
        do {
            _ = try await client.send(SearchRequest(key: "sunset")) {
                $0.mock = .fixtures(store); $0.mockScenario = "../../etc/passwd"
            }
            throw TourExpectationFailed(description: "a traversing scenario was read")
        } catch let error as CurlewError where error.code == .fixturePathRejected {
            say("scenario \"../../etc/passwd\" → \(error.code): nothing outside the fixture folder is read")
        }
    }
}

/// Mocks generated from the response type: plausible values guessed from property names, the
/// same bytes for the same seed, polymorphic families member by member.
struct GeneratedMockStep: TourStep {
    let title = "Mocks: data generated from the response type (names guide values, a seed fixes them)"

    func run(with client: APIClient) async throws {
        let generator = MockGenerator(seed: 7, arrayCount: 2, overrides: ["code": .value(0), "msg": .value("ok")])
        let search = SearchRequest(key: "sunset")
        let page = try await client.response(for: search) { $0.mock = .generated(for: search, by: generator) }
        for picture in page.value.data.pictures {
            say("#\(picture.id) \"\(picture.title)\" \(picture.imageURL)")
        }
        say("source: \(page.source)")
        let media = MediaSearchRequest(key: "fog")
        let mixed = try await client.send(media) { $0.mock = .generated(for: media, by: MockGenerator(seed: 7, arrayCount: 4)) }
        say("MediaSearchRequest (a polymorphic family) → \(mixed.elements.map { String(describing: type(of: $0)) })")
        let text = try MockGenerator(seed: 7, arrayCount: 1).bodyText(for: search)
        say("as a fixture to edit: \(text.split(separator: "\n").count) lines of SearchRequest.json, the same every run")

        // HAccess's automatic mock for a whole client: each call from its own endpoint's type.
        let mocked = APIClient(
            configuration: ClientConfiguration(
                baseURL: "https://api.invalid", middleware: [MockMiddleware(.generated(by: MockGenerator(seed: 7, arrayCount: 1)))]))
        var decoded: [String] = []
        decoded.append(String(describing: type(of: try await mocked.send(SearchRequest(key: "x")))))
        decoded.append(String(describing: type(of: try await mocked.send(PictureRequest(id: 1)))))
        decoded.append(String(describing: type(of: try await mocked.send(LoginRequest(user: "u", password: "p")))))
        decoded.append(String(describing: type(of: try await mocked.send(ProfileRequest(token: "t")))))
        decoded.append(String(describing: type(of: try await mocked.send(OrderRequest(item: "i", quantity: 1)))))
        decoded.append(String(describing: type(of: try await mocked.send(GalleryPictureRequest(id: 1)))))
        decoded.append(String(describing: type(of: try await mocked.send(AccountRequest()) { $0.requiresAuthentication = false })))
        say("one client-wide generated mode, \(decoded.count) endpoints, nothing sent: \(decoded.joined(separator: ", "))")
    }
}
