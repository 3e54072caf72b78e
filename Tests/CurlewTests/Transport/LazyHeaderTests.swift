@testable import Curlew
@testable import CurlewCore
import HTTPTypes
import Testing

/// Response headers stay the raw block until read; what they read as is what `HTTPFields` built
/// from the block says.
@Suite("Lazy response headers")
struct LazyHeaderTests {
    static let block = Array(
        ("Date: Mon, 23 Nov 2026 05:00:00 GMT\r\n" + "Content-Type: application/json\r\n" + "Set-Cookie: a=1\r\n"
            + "set-cookie: b=2\r\n" + "X-Odd:   spaced value \t\r\n" + " folded: no\r\n" + "X-Ctl: a\u{1}b\r\n" + "X-Empty:\r\n" + "\r\n").utf8)

    @Test func fieldsAreTheParsedBlock() {
        let lazy = LazyHeaderFields(block: Self.block)
        #expect(lazy.fields == ResponseHeadParser.fields(of: Self.block))
        #expect(lazy.fields[.contentType] == "application/json")
    }

    @Test(arguments: ["Date", "content-type", "Set-Cookie", "X-Odd", "X-Ctl", "X-Empty", "Folded", "Missing"])
    func aLookupWithoutParsingMatchesTheFields(name: String) throws {
        let fieldName = try #require(HTTPField.Name(name))
        let parsed = ResponseHeadParser.fields(of: Self.block)
        #expect(LazyHeaderFields(block: Self.block)[fieldName] == parsed[fieldName])
        #expect(RawHeaderBlock(Self.block)[fieldName] == parsed[fieldName])
    }

    @Test func settingFieldsReplacesTheBlock() {
        var response = RawResponse(status: .ok, headerFields: LazyHeaderFields(block: Self.block), content: .data(.init()), url: "http://h/")
        let copy = response
        response.headers[.contentType] = "text/plain"
        #expect(response.headers[.contentType] == "text/plain")
        #expect(response.headerFields[.contentType] == "text/plain")
        #expect(copy.headers[.contentType] == "application/json")
        #expect(APIResponse(value: 1, raw: copy).headers == copy.headers)
        #expect(APIResponse(value: 1, raw: copy).raw.headers == copy.headers)
    }
}
