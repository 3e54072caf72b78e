@testable import Curlew
@testable import CurlewCore
import Foundation
import Testing

/// The byte-level query editor behaves as the Foundation-based one did
/// (`removingPercentEncoding`, `contains("?")`).
@Suite("Query string editing")
struct QueryStringTests {
    @Test func itemsAreDecodedInOrder() {
        let items = QueryString.items(of: "https://h/p?a=1&b=x%20y&c&=v&&d=%E2%9C%93+#frag&e=2")
        #expect(items.map(\.name) == ["a", "b", "c", "", "d"])
        #expect(items.map(\.value) == ["1", "x y", "", "v", "✓+"])
    }

    @Test func malformedEscapesAndNonUTF8LeaveTheTextAsItWas() {
        let items = QueryString.items(of: "http://h/?a=%zz&b=%4&c=%FF&d=100%")
        #expect(items.map(\.value) == ["%zz", "%4", "%FF", "100%"])
        for text in ["%zz", "%4", "%FF", "100%", "a%20b", "%E2%9C%93"] {
            #expect(QueryString.items(of: "http://h/?k=" + text).first?.value == (text.removingPercentEncoding ?? text))
        }
    }

    @Test func formPairsTurnPlusIntoSpace() {
        let pairs = QueryString.pairs("name=J+Doe&note=a%2Bb&x=%zz+1", plusIsSpace: true)
        #expect(pairs.map(\.name) == ["name", "note", "x"])
        #expect(pairs.map(\.value) == ["J Doe", "a+b", "%zz 1"])
    }

    @Test func namesOfAURL() {
        #expect(QueryString.names(of: "http://h/p?v=1&platform=linux&%73ign=x") == ["v", "platform", "sign"])
        #expect(QueryString.names(of: "http://h/p").isEmpty)
    }

    @Test(arguments: [
        ("http://h/p", "http://h/p?a=1&b=x%20y&c"),
        ("http://h/p?", "http://h/p?a=1&b=x%20y&c"),
        ("http://h/p?z=0", "http://h/p?z=0&a=1&b=x%20y&c"),
        ("http://h/p?z=0&", "http://h/p?z=0&a=1&b=x%20y&c"),
        ("http://h/p#top", "http://h/p?a=1&b=x%20y&c#top"),
        ("http://h/p?z=0#top?x", "http://h/p?z=0&a=1&b=x%20y&c#top?x"),
    ])
    func appendingKeepsTheFragmentLast(url: String, expected: String) {
        let items: [(name: String, value: String?)] = [("a", "1"), ("b", "x y"), ("c", nil)]
        #expect(QueryString.appending(items, to: url) == expected)
        #expect(QueryString.appending(items.map { URLQueryItem(name: $0.name, value: $0.value) }, to: url) == expected)
        #expect(QueryString.appending([(name: String, value: String?)](), to: url) == url)
    }

    @Test func appendingEncodesEverythingButUnreserved() {
        #expect(QueryString.appending([(name: "ä k", value: "a&b=c/✓~")], to: "http://h/") == "http://h/?%C3%A4%20k=a%26b%3Dc%2F%E2%9C%93~")
    }

    @Test(arguments: [
        ("http://h/p?sign=1", true), ("http://h/p?a=1&sign", true), ("http://h/p?%73ign=x", true),
        ("http://h/p?signs=1", false), ("http://h/p?a=sign", false), ("http://h/p#?sign=1", false), ("http://h/p", false),
    ])
    func hasItemComparesDecodedNamesInTheQueryOnly(url: String, has: Bool) {
        #expect(QueryString.hasItem(named: "sign", in: url) == has)
    }
}
