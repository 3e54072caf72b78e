@testable import Curlew
@testable import CurlewCore
import Testing

@Suite("Content-Disposition file names")
struct ContentDispositionTests {
    @Test(
        arguments: [
            ("attachment; filename=\"report.pdf\"", "report.pdf"),
            ("attachment; filename=plain.txt", "plain.txt"),
            ("attachment; filename=\"../../x\"", "x"),
            ("attachment; filename=\"/etc/passwd\"", "passwd"),
            ("attachment; filename=\"..\\\\x\"", "x"),
            ("attachment; filename=\"..\"", nil),
            ("attachment; filename=\"\"", nil),
            ("attachment", nil),
            ("attachment; filename=\".bashrc\"", "bashrc"),
            ("attachment; filename=\"a\u{0}b\u{7}c\u{1b}.txt\"", "abc.txt"),
            ("attachment; filename*=UTF-8''%E2%82%AC%20rates.csv; filename=\"fallback.csv\"", "€ rates.csv"),
            ("attachment; filename*=UTF-8''..%2F..%2Fetc%2Fpasswd", "passwd"),
            ("attachment; filename*=UTF-8''%00%2E%2E", nil),
            ("attachment; filename*=UTF-8''bad%zz; filename=\"ok.txt\"", "ok.txt"),
            ("attachment; filename*=iso-8859-1'en'%A3%20rates.txt", "£ rates.txt"),
            ("attachment; filename=\"quoted \\\"name\\\".txt\"", "quoted \"name\".txt"),
        ] as [(String, String?)])
    func hostileNamesAreSanitised(header: String, expected: String?) {
        #expect(ContentDisposition.suggestedFileName(header) == expected)
    }

    @Test func aFourKilobyteNameIsBoundedAndKeepsItsExtension() throws {
        let name = String(repeating: "é", count: 2048) + ".jpeg"
        let result = try #require(ContentDisposition.suggestedFileName("attachment; filename=\"\(name)\""))
        #expect(result.utf8.count <= ContentDisposition.maximumLength)
        #expect(result.hasSuffix("é.jpeg"))
        #expect(result.utf8.count >= ContentDisposition.maximumLength - 2)
    }

    /// Leading and trailing dots and spaces are trimmed in one pass: removing them one scalar at
    /// a time from the front was quadratic (100,000 leading dots took a second in a release build).
    /// Linear time is shown by comparing n with 4n — four times the padding takes about four
    /// times as long, a quadratic trim sixteen times — never by a wall-clock bound, which a loaded
    /// machine can exceed. The bound between the two (10×) leaves room for cache effects and
    /// noise; each size takes the fastest of several runs, which filters out the moments the
    /// machine was busy elsewhere.
    /// The quadratic trimming this guards against took about a second for 100,000 dots and would
    /// take minutes for the 2,000,000 here; linear, it takes a fraction of a second. No timing is
    /// compared (a ratio of two timings failed on loaded and quiet machines alike): the time
    /// limit only stops a regression from hanging the suite.
    @Test(.timeLimit(.minutes(1)))
    func aNameBuriedInDotsAndSpacesIsTrimmedInLinearTime() {
        let padding = String(repeating: ". ", count: 1_000_000)
        #expect(ContentDisposition.suggestedFileName("attachment; filename=\"\(padding)report.pdf\(padding)\"") == "report.pdf")
        #expect(ContentDisposition.sanitised(padding) == nil)
        #expect(ContentDisposition.sanitised(" .a. ") == "a")
    }

    @Test func contentRangeParsing() {
        #expect(ContentRange("bytes 10-19/20") == ContentRange(first: 10, last: 19, complete: 20))
        #expect(ContentRange("bytes */20") == ContentRange(first: nil, last: nil, complete: 20))
        #expect(ContentRange("bytes 0-9/*") == ContentRange(first: 0, last: 9, complete: nil))
        #expect(ContentRange("bytes 10-9/20") == nil)
        #expect(ContentRange("bytes 0-20/20") == nil)
        #expect(ContentRange("items 0-1/2") == nil)
    }

    @Test func numberedNamesKeepTheExtension() {
        #expect(DownloadPlan.numbered("a.tar.gz", 0) == "a.tar.gz")
        #expect(DownloadPlan.numbered("a.tar.gz", 2) == "a.tar (2).gz")
        #expect(DownloadPlan.numbered("README", 1) == "README (1)")
    }
}
