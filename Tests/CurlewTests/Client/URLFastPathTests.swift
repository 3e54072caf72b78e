@testable import Curlew
@testable import CurlewCore
import Foundation
import Testing

/// `RequestURLBuilder.build()` takes a one-pass byte path for the common URL shapes; for every
/// shape it must give what the rule-by-rule builder gives: the same URL, or the same error code.
@Suite("URL fast path")
struct URLFastPathTests {
    static let paths = [
        "http://127.0.0.1:18091/small.json", "https://api.example.com/v1/items?x=1", "HTTP://example.com/a",
        "http://example.com", "http://example.com?q", "http://user:pw@example.com:8080/a#frag", "http://[::1]:80/a",
        "http://[::1/a", "http://:80/a", "http://example.com:123456/a", "http://example.com:8a/a", "http:///a",
        "https://example.com/a b", "http://example.com/caf\u{E9}", "ftp://example.com/a", "/v1/items", "v1/items",
        "//v1//items", "", "/", "localhost:8080/x", "a:b", "/with%20escape", "/a?b=c&d", "/line\nbreak", "/tab\there",
        "/{id}", "/\u{7F}", "mailto:x@example.com", "50%off", "/a%2", "/done%", "/a%zz/b%41", "x?y=1",
        "http://example.com/50%off",
    ]
    static let bases: [String?] = [
        nil, "", "https://api.example.com", "https://api.example.com/", "https://api.example.com/v2//", "http://[::1]:8080",
        "HTTPS://api.example.com", "https://api.example.com:99999", "https://exa mple.com", "https://", "ftp://example.com",
        "https://user@api.example.com/base", "https://api.example.com/v1?key=abc", "https://api.example.com/v1/?key=abc",
        "https://api.example.com/v1#top", "https://api.example.com/v1?",
    ]

    @Test func sameURLOrErrorAsEveryRuleInTurn() {
        for base in Self.bases {
            for path in Self.paths {
                let builder = RequestURLBuilder(baseURL: base, path: path, query: [], method: .get)
                let fast: Result<String, CurlewError> = Result { () throws(CurlewError) in try builder.build() }
                let slow: Result<String, CurlewError> = Result { () throws(CurlewError) in try builder.buildRuleByRule() }
                switch (fast, slow) {
                case (.success(let a), .success(let b)):
                    #expect(a == b, "base \(base ?? "nil"), path \(path)")
                case (.failure(let a), .failure(let b)):
                    #expect(a.code == b.code, "base \(base ?? "nil"), path \(path)")
                default:
                    Issue.record("base \(base ?? "nil"), path \(path): \(fast) vs \(slow)")
                }
            }
        }
    }

    @Test func commonShapes() throws {
        #expect(
            try RequestURLBuilder(baseURL: nil, path: "http://127.0.0.1:18091/small.json", query: [], method: .get).build()
                == "http://127.0.0.1:18091/small.json")
        #expect(
            try RequestURLBuilder(baseURL: "https://api.example.com/v2/", path: "/items/7", query: [], method: .get).build()
                == "https://api.example.com/v2/items/7")
        #expect(
            try RequestURLBuilder(baseURL: "https://api.example.com", path: "", query: [], method: .get).build()
                == "https://api.example.com")
    }

    /// A `%` that starts no escape is a literal percent sign: sent as `%25`, never as an invalid
    /// escape the server would reject or misread. An escape stays as it is.
    @Test func aLonePercentSignIsEncodedAndAnEscapeIsKept() throws {
        func url(_ path: String) throws -> String {
            try RequestURLBuilder(baseURL: "https://api.example.com", path: path, query: [], method: .get).build()
        }
        #expect(try url("sale/50%off") == "https://api.example.com/sale/50%25off")
        #expect(try url("done%") == "https://api.example.com/done%25")
        #expect(try url("a%2") == "https://api.example.com/a%252")
        #expect(try url("a%zz/b%41") == "https://api.example.com/a%25zz/b%41")
        #expect(try url("with%20escape?q=100%") == "https://api.example.com/with%20escape?q=100%25")
        #expect(try url("https://cdn.example.com/50%off") == "https://cdn.example.com/50%25off")
    }

    /// A base URL that carries a query (an API key in the URL) keeps it after the path, before
    /// the path's own query and the query items — it once went before the path
    /// (`…/v1?key=abc/items`), so the server saw the wrong path and a mangled key.
    @Test func aBaseURLsQueryGoesAfterThePath() throws {
        let base = "https://api.example.com/v1/?key=abc"
        #expect(try RequestURLBuilder(baseURL: base, path: "items", query: [], method: .get).build() == "https://api.example.com/v1/items?key=abc")
        #expect(
            try RequestURLBuilder(baseURL: base, path: "/items?page=2", query: [URLQueryItem(name: "q", value: "a b")], method: .get).build()
                == "https://api.example.com/v1/items?key=abc&page=2&q=a%20b")
        #expect(try RequestURLBuilder(baseURL: base, path: "", query: [], method: .get).build() == "https://api.example.com/v1?key=abc")
        #expect(
            try RequestURLBuilder(baseURL: base, path: "https://other.example.com/x", query: [], method: .get).build()
                == "https://other.example.com/x", "an absolute path ignores the base URL")
        let fragment = #expect(throws: CurlewError.self) {
            try RequestURLBuilder(baseURL: "https://api.example.com/v1#top", path: "items", query: [], method: .get).build()
        }
        #expect(fragment?.code == .malformedURL)
        #expect(fragment?.message == "the base URL has a fragment (#…), which is never sent; remove it")
    }
}
