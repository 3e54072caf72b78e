import Curlew
@testable import CurlewOpenAPI
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

@Suite("CurlewTransport: the request URL from the base URL and the generated path")
struct URLJoiningTests {
    /// The URL as two `URLComponents` round trips build it (the transport's general path).
    static func parsed(base: String, path: String) -> String? {
        guard var components = URLComponents(string: base), let relative = URLComponents(string: path) else { return nil }
        var basePath = components.percentEncodedPath
        if basePath.hasSuffix("/"), relative.percentEncodedPath.hasPrefix("/") { basePath.removeLast() }
        components.percentEncodedPath = basePath + relative.percentEncodedPath
        components.percentEncodedQuery = relative.percentEncodedQuery
        return components.string
    }

    @Test(
        "Joined as text, the URL is the one URLComponents builds",
        arguments: [
            ("http://127.0.0.1:8080", "/small.json"),
            ("http://127.0.0.1:8080/", "/small.json"),
            ("http://127.0.0.1:8080/v1", "/pets/42"),
            ("http://127.0.0.1:8080/v1/", "/pets/42?limit=5&tag=a%20b"),
            ("https://user@api.example.com:8443/base/path", "/pets/%E2%9C%93/photos"),
            ("http://[::1]:8080/v1", "/pets?q=a:b@c/d?e"),
            ("http://127.0.0.1:8080/v1", "/pets?"),
            ("http://127.0.0.1:8080/v1", "/a-b_c.d~e!$&'()*+,;=/x"),
        ])
    func joinedMatchesParsed(base: String, path: String) throws {
        let joined = try #require(CurlewTransport.joined(base: base, path: path))
        #expect(joined == Self.parsed(base: base, path: path))
        let url = try #require(URL(string: base))
        #expect(try CurlewTransport.url(of: HTTPRequest(method: .get, scheme: nil, authority: nil, path: path), baseURL: url) == joined)
    }

    @Test(
        "A base URL with a query or fragment, a relative or unusual path, or a broken escape is parsed instead",
        arguments: [
            ("http://127.0.0.1:8080/v1?key=1", "/pets"),
            ("http://127.0.0.1:8080/v1#top", "/pets"),
            ("http://127.0.0.1:8080/v1", "pets"),
            ("http://127.0.0.1:8080/v1", "/pets#frag"),
            ("http://127.0.0.1:8080/v1", "/pets/a b"),
            ("http://127.0.0.1:8080/v1", "/pets/%zz"),
            ("http://127.0.0.1:8080/v1", "/pets/%4"),
            ("http://127.0.0.1:8080/v1", "/pets/ünïcode"),
        ])
    func unusualURLsAreParsed(base: String, path: String) throws {
        #expect(CurlewTransport.joined(base: base, path: path) == nil)
        let url = try #require(URL(string: base))
        let request = HTTPRequest(method: .get, scheme: nil, authority: nil, path: path)
        if let expected = Self.parsed(base: base, path: path) {
            #expect(try CurlewTransport.url(of: request, baseURL: url) == expected)
        } else {
            #expect(throws: CurlewError.self) { try CurlewTransport.url(of: request, baseURL: url) }
        }
    }
}

/// A server URL the transport cannot send to fails before anything is sent, and the error names
/// the URL the generated client asked for (not that URL pasted after the `APIClient`'s base URL).
@Suite("CurlewTransport: a server URL it cannot send to")
struct UnusableServerURLTests {
    @Test(
        "Each fails at .prepare with its code and the URL the generated client built",
        arguments: [
            ("ftp://127.0.0.1:1/v1", CurlewError.Code.unsupportedScheme, "ftp://127.0.0.1:1/v1/pets"),
            ("file:///srv/v1", .unsupportedScheme, "file:///srv/v1/pets"),
            ("/v1", .malformedURL, "/v1/pets"),
            ("http:///v1", .malformedURL, "http:///v1/pets"),
        ])
    func unusableServerURL(server: String, code: CurlewError.Code, url: String) async throws {
        let api = APIClient(configuration: ClientConfiguration(baseURL: "http://127.0.0.1:9"))
        let client = Client(serverURL: try #require(URL(string: server)), transport: CurlewTransport(client: api))
        let error = await #expect(throws: ClientError.self) { _ = try await client.listPets() }
        let curlew = error.flatMap(curlewError(of:))
        #expect(curlew?.code == code, "\(String(describing: error?.underlyingError))")
        #expect(curlew?.stage == .prepare)
        #expect(curlew?.request?.redactedURL == url)
        #expect(curlew?.request?.method == .get)
    }

    @Test(
        "An http(s) URL with a host passes, whatever the scheme's case",
        arguments: ["http://127.0.0.1:8080/v1/pets", "HTTPS://api.example.com/pets", "Http://user:pw@host/x", "https://[::1]:8443/x"])
    func sendableURL(url: String) throws {
        let base = try #require(URL(string: url))
        #expect(throws: Never.self) { try CurlewTransport.checkSendable(url, baseURL: base, request: RequestSummary(method: .get, url: url)) }
    }
}
