import Curlew
import Foundation
import Testing

@Suite("A prepared request's URL changes only through a checked setter that keeps its summary in step")
struct PreparedRequestURLTests {
    @Test func setURLReplacesTheURLAndTheSummary() throws {
        var request = PreparedRequest(method: .get, url: "https://api.example.com/a?token=s3cr3t")
        try request.setURL("https://mirror.example.com/a?token=s3cr3t&page=2")
        #expect(request.url == "https://mirror.example.com/a?token=s3cr3t&page=2")
        #expect(request.summary.redactedURL.hasPrefix("https://mirror.example.com/a?token="))
        #expect(request.summary.redactedURL.hasSuffix("&page=2"))
        #expect(!request.summary.description.contains("s3cr3t"), "the summary still redacts secrets")
        request.method = .post
        #expect(request.summary.method == .post, "the method and the summary move together")
    }

    @Test(arguments: [
        ("ftp://files.example.com/x", CurlewError.Code.unsupportedScheme),
        ("/relative/path", .malformedURL),
        ("https:///no-host", .malformedURL),
        ("https://", .malformedURL),
        ("", .malformedURL),
        ("https://api.example.com/a?x=1\r\nX-Injected: yes", .invalidPath),
        ("https://api.example.com/a b", .invalidPath),
        ("https://api.example.com/a?x=\u{7F}", .invalidPath),
    ])
    func setURLRefusesWhatIsNotAnAbsoluteHTTPURL(url: String, code: CurlewError.Code) {
        var request = PreparedRequest(method: .get, url: "https://api.example.com/a")
        let error = #expect(throws: CurlewError.self) { try request.setURL(url) }
        #expect(error?.code == code)
        #expect(request.url == "https://api.example.com/a", "a refused URL leaves the request unchanged")
        #expect(request.summary.redactedURL == "https://api.example.com/a")
    }
}
