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
        "/{id}", "/\u{7F}", "mailto:x@example.com",
    ]
    static let bases: [String?] = [
        nil, "", "https://api.example.com", "https://api.example.com/", "https://api.example.com/v2//", "http://[::1]:8080",
        "HTTPS://api.example.com", "https://api.example.com:99999", "https://exa mple.com", "https://", "ftp://example.com",
        "https://user@api.example.com/base",
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
}
