import Curlew
import CurlewTesting
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

@Suite("Stubs and recording")
struct StubAndRecordingTests {
    /// Made for each use, not a `static let`: a `Data` in a global that lives until exit is
    /// reported by LeakSanitizer, which cannot see the tagged pointer Data keeps its storage in
    /// (scripts/sanitizers/lsan-global-data-repro.sh).
    static var stub: MockStub {
        MockStub(
            .json(#"{"total": 2, "pictures": []}"#),
            scenarios: [
                "empty": .json(#"{"total": 0, "pictures": []}"#),
                "slow": .json(#"{"total": 1, "pictures": []}"#, delay: .seconds(2)),
                "offline": .failure(.connectionReset, delay: .milliseconds(10)),
            ])
    }

    @Test func stubsAnswerImmediatelyOrAfterADelayAndGoThroughMiddleware() async throws {
        let delays = RecordedDelays()
        let seeing = SeeingMiddleware()
        try await withLoopback(handler: { _ in .json("{}") }) { server, _, transport in
            let client = APIClient(
                configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [seeing, MockMiddleware(.stub(Self.stub).clock(delays.clock))]),
                transport: transport)
            let plain = try await client.response(for: MockSearch())
            #expect(plain.value.total == 2)
            #expect(plain.source.detail == "stub MockSearch")
            let empty = try await client.response(for: MockSearch()) { $0.mockScenario = "empty" }
            #expect(empty.value.total == 0)
            #expect(empty.source.detail == "stub MockSearch.empty")
            #expect(delays.requested == [])
            #expect(try await client.send(MockSearch()) { $0.mockScenario = "slow" }.total == 1)
            #expect(delays.requested == [.seconds(2)])
            let offline = await #expect(throws: CurlewError.self) { try await client.send(MockSearch()) { $0.mockScenario = "offline" } }
            #expect(offline?.code == .connectionReset)
            #expect(delays.requested == [.seconds(2), .milliseconds(10)])
            let unknown = await #expect(throws: CurlewError.self) { try await client.send(MockSearch()) { $0.mockScenario = "nope" } }
            #expect(unknown?.code == .fixtureNotFound)
            #expect(unknown?.message == "the stub has no scenario \"nope\" (it has: empty, offline, slow)")
            #expect(seeing.observed == ["200 mock (stub MockSearch)", "200 mock (stub MockSearch.empty)", "200 mock (stub MockSearch.slow)", "error connectionReset", "error fixtureNotFound"])
            #expect(server.requestCount == 0)
        }
    }

    @Test func anImmediateClockSkipsDelaysAndACancelledCallStops() async throws {
        let client = APIClient(baseURL: "http://127.0.0.1:9")
        let quick = try await client.send(MockSearch()) {
            $0.mock = MockMode.stub(Self.stub).clock(.immediate); $0.mockScenario = "slow"
        }
        #expect(quick.total == 1)
        let task = Task {
            try await client.send(MockSearch()) {
                $0.mock = .stub(Self.stub); $0.mockScenario = "slow"
            }
        }
        task.cancel()
        await #expect(throws: CancellationError.self) { try await task.value }
    }

    @Test func aRecordedExchangeReplaysToTheSameValueWithSecretsRedacted() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-record-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let body = #"{"total": 1, "pictures": [{"id": 5, "url": "https://images.test/5.jpg"}], "sessionToken": "s3cr3t"}"#
        try await withLoopback(handler: { _ in
            ServerResponse(status: 200, headers: [("Content-Type", "application/json"), ("Set-Cookie", "sid=abc"), ("X-Page", "1")], body: Array(body.utf8))
        }) { server, _, transport in
            let recorder = try FixtureRecorder(directory: directory)
            let recording = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [recorder]), transport: transport)
            let live = try await recording.send(MockSearch())
            #expect(server.requestCount == 1)

            let recorded = try String(contentsOfFile: directory + "/MockSearch.json", encoding: .utf8)
            #expect(!recorded.contains("s3cr3t"))
            #expect(recorded.contains("\"sessionToken\" : \"REDACTED\""))
            let meta = try JSONDecoder().decode(JSONValue.self, from: Data(contentsOf: URL(fileURLWithPath: directory + "/MockSearch.meta.json")))
            #expect(
                meta
                    == .object([
                        "status": .int(200),
                        "headers": .object(["content-type": "application/json", "set-cookie": "REDACTED", "x-page": "1"]),
                    ]))

            let replaying = APIClient(
                configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [MockMiddleware(.fixtures(try FixtureStore(directory: directory)))]),
                transport: transport)
            let replayed = try await replaying.response(for: MockSearch())
            #expect(replayed.value == live)
            #expect(replayed.headers[HTTPField.Name("X-Page")!] == "1")
            #expect(replayed.source.detail == "MockSearch.json")
            #expect(server.requestCount == 1)
        }
    }

    @Test func aGeneratedBodyWrittenAsAFixtureReplays() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-gen-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let text = try MockGenerator(seed: 12).bodyText(for: MockEnveloped())
        try text.write(toFile: directory + "/MockEnveloped.json", atomically: true, encoding: .utf8)
        let client = APIClient(configuration: ClientConfiguration(baseURL: "http://127.0.0.1:9", middleware: [MockMiddleware(.fixtures(try FixtureStore(directory: directory)))]))
        let album = try await client.send(MockEnveloped())
        #expect(album == (try MockGenerator(seed: 12).value(of: MockAlbum.self)))
    }
}
