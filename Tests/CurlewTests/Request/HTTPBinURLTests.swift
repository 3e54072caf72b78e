@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import TestSupport
import Testing

/// How a relative path, a base URL and query items become the URL a real server sees: httpbin's
/// `/anything` echoes the URL and the decoded query. These tests fail, not skip, without
/// `CURLEW_HTTPBIN_URL`.
@Suite("URLs against httpbin", .timeLimit(.minutes(1)))
struct HTTPBinURLTests {
    struct Echo: Decodable {
        var url: String
        var args: [String: String]
    }

    struct Anything: Endpoint {
        typealias Response = Echo
        var path: String
        var query: [URLQueryItem] = []
    }

    /// The README's "relative to the client's base URL": with or without a leading `/` in the path
    /// and a trailing `/` on the base, the path goes under the base URL's own path.
    @Test(arguments: ["/anything/api", "/anything/api/"], ["items/7", "/items/7", "//items/7"])
    func aRelativePathGoesUnderTheBasePathWithOrWithoutSlashes(base: String, path: String) async throws {
        let root = try TestServers.httpbin()
        let client = APIClient(baseURL: root + base, transport: CurlTransport.shared)
        let echo = try await client.send(Anything(path: path))
        #expect(echo.url == root + "/anything/api/items/7")
    }

    /// Query names and values with reserved characters reach the server exactly as written.
    @Test func queryItemsWithReservedCharactersArriveUnchanged() async throws {
        let client = APIClient(baseURL: try TestServers.httpbin(), transport: CurlTransport.shared)
        let values = ["a b", "x+y", "a&b=c", "ü😀", "100%", "#frag", "/?:@", "semi;colon", "line\nbreak"]
        let items = values.enumerated().map { URLQueryItem(name: "k\($0.offset) \($0.element)", value: $0.element) }
        let echo = try await client.send(Anything(path: "anything", query: items))
        #expect(echo.args == Dictionary(uniqueKeysWithValues: items.map { ($0.name, $0.value ?? "") }))
    }

    /// A base URL with its own query (an API key in the URL): the server sees the base path plus
    /// the endpoint's path, and the base's query beside the endpoint's own.
    @Test func aBaseURLsQueryReachesTheServerBesideThePathsQuery() async throws {
        let root = try TestServers.httpbin()
        let client = APIClient(baseURL: root + "/anything/v1?key=abc", transport: CurlTransport.shared)
        let echo = try await client.send(Anything(path: "items?page=2", query: [URLQueryItem(name: "q", value: "a b")]))
        #expect(echo.url == root + "/anything/v1/items?key=abc&page=2&q=a%20b")
        #expect(echo.args == ["key": "abc", "page": "2", "q": "a b"])
    }

    /// A literal `%` in a path is sent as `%25`: nginx serves the file named `50%off.txt`
    /// (sent as `50%off.txt`, an invalid escape, nginx answered `400 Bad Request`).
    @Test func aLiteralPercentSignInAPathReachesNginxAsAPercentSign() async throws {
        let environment = TestServers.environment
        let url = try #require(environment["CURLEW_NGINX_URL"], "CURLEW_NGINX_URL is not set: run scripts/test.sh")
        let root = try #require(environment["CURLEW_NGINX_ROOT"], "CURLEW_NGINX_ROOT is not set: run scripts/test.sh")
        let folder = "percent-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root + "/" + folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: root + "/" + folder) }
        try Data("half price".utf8).write(to: URL(fileURLWithPath: root + "/" + folder + "/50%off.txt"))
        struct File: Endpoint {
            typealias Response = String
            var path: String
        }
        let client = APIClient(baseURL: url, transport: CurlTransport.shared)
        let response = try await client.response(for: File(path: folder + "/50%off.txt"))
        #expect(response.value == "half price")
        #expect(response.raw.url == url + "/" + folder + "/50%25off.txt")
    }
}
