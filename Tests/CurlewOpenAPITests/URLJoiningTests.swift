import Curlew
@testable import CurlewOpenAPI
import Foundation
import HTTPTypes
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
