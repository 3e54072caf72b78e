@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import Testing

/// The signing middleware's byte-level canonical form gives exactly the text of the `String`-based
/// one it replaced (decode every pair into a `String`, sort the tuples, join), for ASCII, for
/// non-ASCII (sorted as `String`s, canonical equivalence included) and for malformed escapes.
@Suite("Signing canonical form")
struct SignedPairsTests {
    /// The canonical form as it was computed before: `QueryString` pairs, tuple sort, join.
    static func reference(url: String, form: String? = nil) -> String {
        var pairs = QueryString.items(of: url)
        if let form { pairs += QueryString.pairs(form, plusIsSpace: true) }
        pairs.sort { ($0.name, $0.value) < ($1.name, $1.value) }
        return pairs.map { "\($0.name)=\($0.value)" }.joined(separator: "&")
    }

    @Test(arguments: [
        "http://h/p?ts=1700000000&v=1&platform=linux",
        "http://h/p?b=2&a=1&a=0&ab=&a",
        "http://h/p?x=%zz&y=%4&z=%FF&w=100%&k=%E2%9C%93",
        "http://h/p?%C3%A9=1&e%CC%81=2&e=3&%C3%A9=0",
        "http://h/p?%C3%85=1&%E2%84%AB=1&A=1",
        "http://h/p?a+b=c+d&&=v&q=%2B#frag&ignored=1",
        "http://h/p?Z=1&a=1&_=1&~=1&%20=1",
        "http://h/p",
        "http://h/p?",
    ])
    func queryMatchesTheStringForm(url: String) {
        let request = PreparedRequest(method: .get, url: url)
        #expect(SigningMiddleware.canonicalString(for: request) == Self.reference(url: url))
    }

    @Test func formBodyMatchesTheStringForm() {
        let form = "name=J+Doe&note=a%2Bb&x=%zz+1&%C3%A9=%E2%9C%93&b"
        var headers = HTTPFields()
        headers[.contentType] = "application/x-www-form-urlencoded"
        let request = PreparedRequest(method: .post, url: "http://h/p?ts=9&a=1", headers: headers, body: Data(form.utf8))
        #expect(SigningMiddleware.canonicalString(for: request) == Self.reference(url: "http://h/p?ts=9&a=1", form: form))
        #expect(SigningMiddleware.canonicalString(for: request) == "a=1&b=&name=J Doe&note=a+b&ts=9&x=%zz 1&é=✓")
    }

    @Test func signatureOverBytesMatchesTheStringSignature() {
        let canonical = "a=1&b=✓&ts=9"
        for algorithm in [SigningMiddleware.Algorithm.md5, .hmacSHA256] {
            #expect(
                SigningMiddleware.signature(of: Array(canonical.utf8), secret: "123456", algorithm: algorithm)
                    == SigningMiddleware.signature(of: canonical, secret: "123456", algorithm: algorithm))
        }
        // The seed's MD5 scheme: md5("a=1&b=2" + "123456").
        #expect(SigningMiddleware.signature(of: "a=1&b=2", secret: "123456", algorithm: .md5) == "fa22c8c5e92ba0998b7f0a94d8dd4156")
    }
}
