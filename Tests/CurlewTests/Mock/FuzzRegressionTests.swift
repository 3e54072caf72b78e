import Foundation
import HTTPTypes
import Testing

@testable import Curlew
@testable import CurlewCore
@testable import CurlewTesting

/// Inputs the fuzz targets under Fuzz/ found, kept as exact regression tests.
@Suite struct FuzzRegressionTests {
    /// A fresh fixture directory holding `files` (name → JSON text) and a store over it; the
    /// directory is removed after `body`.
    private func withFixtures(_ files: [(name: String, json: String)], _ body: (FixtureStore) throws -> Void) throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-fuzz-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
        for file in files { try Data(file.json.utf8).write(to: URL(fileURLWithPath: root + "/" + file.name)) }
        try body(try FixtureStore(directory: root))
    }

    /// FuzzFixtureName: the name `Search.meta` (no scenario) read `Search.meta.json`, which is the
    /// metadata file of fixture `Search`, as a body; a scenario ending in `.meta` did the same for
    /// another scenario's metadata. Both are rejected before any path is built.
    @Test func aFixtureNameOrScenarioEndingInMetaIsRejected() throws {
        try withFixtures([
            (name: "Search.json", json: #"{"total": 1}"#),
            (name: "Search.meta.json", json: #"{"status": 404}"#),
            (name: "Search.slow.meta.json", json: #"{"delayMilliseconds": 5}"#),
        ]) { store throws in
            let name = #expect(throws: CurlewError.self) { try store.answer(for: "Search.meta") }
            #expect(name?.code == .fixturePathRejected)
            #expect(name?.message == #"the fixture name "Search.meta" is rejected: it ends with ".meta" (that names metadata files)"#)
            let scenario = #expect(throws: CurlewError.self) { try store.answer(for: "Search", scenario: "slow.meta") }
            #expect(scenario?.code == .fixturePathRejected)
            #expect(scenario?.message == #"the fixture scenario "slow.meta" is rejected: it ends with ".meta" (that names metadata files)"#)
            // The fixture itself still answers, with its metadata.
            #expect(try store.answer(for: "Search").status.code == 404)
        }
    }

    /// FuzzContentDisposition: a name over the length limit made of one enormous character (a
    /// letter with 300 combining marks) was cut to the bare extension `.txt`, a hidden file;
    /// without an extension it came back empty. It is now cut by scalars.
    @Test func anOverlongSingleCharacterNameKeepsAStemAndNoLeadingDot() throws {
        let stem = "a" + String(repeating: "\u{301}", count: 300)
        let withExtension = try #require(ContentDisposition.suggestedFileName("attachment; filename=\"\(stem).txt\""))
        #expect(withExtension == "a" + String(repeating: "\u{301}", count: 97) + ".txt")
        #expect(withExtension.utf8.count == 199)
        let bare = try #require(ContentDisposition.suggestedFileName("attachment; filename=\"\(stem)\""))
        #expect(bare == "a" + String(repeating: "\u{301}", count: 99))
        #expect(bare.utf8.count == 199)
    }

    /// FuzzMultipart: a part name starting with a combining mark (U+0618) joins the opening quote
    /// into one Character, so CurlewTesting's reader did not see the quoted value and read the
    /// name with its quotes. It reads parameters by Unicode scalars now.
    @Test func aMultipartNameStartingWithACombiningMarkReadsBack() throws {
        let name = "\u{0618}:x"
        let body = Data("--b\r\nContent-Disposition: form-data; name=\"\(name)\"; filename=\"\u{301}.txt\"\r\n\r\nv\r\n--b--\r\n".utf8)
        let parts = try RecordedMultipartPart.parts(of: body, contentType: "multipart/form-data; boundary=b")
        #expect(parts.count == 1)
        #expect(parts.first?.name == name)
        #expect(parts.first?.filename == "\u{301}.txt")
        #expect(parts.first?.body == Data("v".utf8))
    }

    /// FuzzMultipart (after the merge): `%22` followed by a combining mark (U+0652) attaches the
    /// mark to the `2`, so a Character-level replace left the escape in the name read back. The
    /// escapes are undone scalar by scalar now; every name the encoder writes reads back.
    @Test func anEscapedQuoteFollowedByACombiningMarkReadsBack() async throws {
        for name in ["\u{06}\"\"\u{0652}\"", "a\"\u{0301}b", "x\r\u{0652}\n", "%2\u{0652}"] {
            var form = MultipartForm()
            form.append(field: name, value: "v")
            let transport = MockTransport { .text("ok", for: $0) }
            let client = APIClient(baseURL: "https://api.test", transport: transport)
            _ = try await client.send(MultipartProbe(form: form))
            let parts = try await transport.requests[0].multipartParts()
            #expect(parts.map(\.name) == [name])
        }
    }

    /// FuzzCacheEntry (10-million-run campaign): a resume record whose field ends in CR did not
    /// survive text → parse: its lines were split on Characters, and CR LF is one Character, so
    /// the CR and the LF after it stayed in the field (`d\r` came back as `d\r\n`; a URL ending in
    /// CR swallowed the next line). Lines are split on the LF byte now.
    @Test func aResumeRecordFieldEndingInCarriageReturnSurvivesItsText() throws {
        let fuzzed = try #require(ResumeRecord(text: "curlew-resume 1\nh\naac\n1041048571048576\naplicat\n\u{0F}\u{0F}-, e=,\r"))
        #expect(fuzzed.contentDisposition == "\u{0F}\u{0F}-, e=,\r")
        #expect(ResumeRecord(text: fuzzed.text) == fuzzed)
        let record = ResumeRecord(url: "https://a.test/f\r", validator: "\"v\"\r", completeLength: 10, contentType: "t\r", contentDisposition: "d\r")
        let parsed = try #require(ResumeRecord(text: record.text))
        #expect(parsed == record)
        #expect(parsed.url == "https://a.test/f\r")
        #expect(parsed.completeLength == 10)
    }

    /// FuzzFixtureName (10-million-run campaign): the checks compared Characters, and a mark that
    /// joins a dot to its neighbour hid the dot. `X\u{604}.meta` (U+0604 is a prepended
    /// concatenation mark, one Character with the `.` after it) passed the `.meta` check, so its
    /// body file `X\u{604}.meta.json` was fixture `X\u{604}`'s metadata; `.\u{301}x` (a combining
    /// accent on a leading dot) passed the leading-dot check; `a\u{604}..b` passed the `..` check.
    /// The name the fuzzer found, `\u{604}` alone, is a valid name whose body file ends in `.json`
    /// by bytes (the target compared Characters too) — but its metadata file was found by cutting
    /// five Characters off `X\u{604}.json`, which gave `X.meta.json`: fixture `X`'s metadata.
    @Test func fixtureNameChecksCompareBytesNotCharacters() throws {
        try withFixtures([
            (name: "X\u{604}.json", json: #"{"total": 1}"#),
            (name: "X\u{604}.meta.json", json: #"{"status": 404}"#),
            (name: "X.meta.json", json: #"{"status": 500}"#),
        ]) { store throws in
            let meta = #expect(throws: CurlewError.self) { try store.answer(for: "X\u{604}.meta") }
            #expect(meta?.code == .fixturePathRejected)
            #expect(meta?.message == "the fixture name \"X\u{604}.meta\" is rejected: it ends with \".meta\" (that names metadata files)")
            #expect(try store.answer(for: "X\u{604}").status.code == 404)

            let dot = #expect(throws: CurlewError.self) { try FixtureName.file(for: ".\u{301}x", scenario: nil) }
            #expect(dot?.message == "the fixture name \".\u{301}x\" is rejected: it starts with '.'")
            let dots = #expect(throws: CurlewError.self) { try FixtureName.file(for: "a", scenario: "a\u{604}..b") }
            #expect(dots?.message == "the fixture scenario \"a\u{604}..b\" is rejected: it contains '..'")
            #expect(try FixtureName.file(for: "\u{604}", scenario: nil) == "\u{604}.json")
            #expect(FixtureName.metadataFile(forBody: "X\u{604}.json") == "X\u{604}.meta.json")
        }
    }
}

/// A multipart POST whose form is the whole body.
private struct MultipartProbe: Endpoint {
    typealias Response = String
    var form: MultipartForm
    var method: HTTPRequest.Method { .post }
    var path: String { "/m" }
    var body: RequestPayload? { .multipart(form) }
}
