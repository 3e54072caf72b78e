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
    /// Linear time is shown by counting work, never by a clock (a wall-clock bound failed on a
    /// loaded machine under AddressSanitizer): every step of the parser and the sanitiser is
    /// constant-time by construction (indices into arrays, appends, no removal from the front),
    /// and the steps are counted. Linear means the count for padding `n`, `2n` and `3n` grows by
    /// the same amount each time (a zero second difference) and by a small constant per padding
    /// scalar; a rescan from the front for each scalar would make the second difference grow
    /// with `n`.
    @Test func aNameBuriedInDotsAndSpacesIsTrimmedInLinearTime() {
        func steps(padding pairs: Int) -> Int {
            let padding = String(repeating: ". ", count: pairs)
            var steps = 0
            #expect(ContentDisposition.suggestedFileName("attachment; filename=\"\(padding)report.pdf\(padding)\"", steps: &steps) == "report.pdf")
            return steps
        }
        let n = 2_000
        let (none, once, twice, thrice) = (steps(padding: 0), steps(padding: n), steps(padding: 2 * n), steps(padding: 3 * n))
        #expect(twice - once == once - none, "the same work for each further n padding pairs")
        #expect(thrice - twice == once - none)
        // Each padding pair is four scalars (two before the name, two after); each is consumed
        // once by the parser, looked at once by the sanitiser's filter, and once by the trim.
        #expect(once - none == 4 * 3 * n)
        #expect(ContentDisposition.sanitised(String(repeating: ". ", count: n)) == nil)
        #expect(ContentDisposition.sanitised(" .a. ") == "a")
    }

    /// The trim's steps for a name of only padding: each scalar once by the filter, once by the
    /// search for the first kept scalar (which finds none); nothing else.
    @Test func onlyPaddingIsLookedAtTwicePerScalar() {
        var steps = 0
        #expect(ContentDisposition.sanitised(String(repeating: ". ", count: 1000), steps: &steps) == nil)
        #expect(steps == 2 * 2000)
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
