import Curlew
import CurlewTesting
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

/// A client of the loopback server, on a real `CurlTransport`, with `middleware`.
private func withMockedLoopback(
    _ middleware: [any APIMiddleware], _ body: (LoopbackServer, APIClient) async throws -> Void
) async throws {
    try await withLoopback(handler: { _ in .json(#"{"total": 99, "pictures": []}"#) }) { server, _, transport in
        let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: middleware), transport: transport)
        try await body(server, client)
    }
}

@Suite("Fixture mocks")
struct FixtureMockTests {
    @Test func aFixtureAnswersThroughTheWholeChainAndNothingReachesTheServer() async throws {
        let store = try #require(MockFixtures.store)
        let seeing = SeeingMiddleware()
        let recorder = RequestRecorder()
        try await withMockedLoopback([MockMiddleware(.fixtures(store)), seeing, recorder]) { server, client in
            let response = try await client.response(for: MockSearch())
            #expect(response.value == MockSearchResults(total: 2, pictures: [.init(id: 1, url: "https://images.test/1.jpg"), .init(id: 2, url: "https://images.test/2.jpg")]))
            #expect(response.source == .mock)
            #expect(response.source.detail == "MockSearch.json")
            #expect(response.status == .ok)
            #expect(response.headers[.contentType] == "application/json")
            #expect(seeing.observed == ["200 mock (MockSearch.json)"])
            #expect(recorder.requests.map { $0.headers[HTTPField.Name("X-Signature")!] } == ["signed"])
            expectRequest(recorder.requests.first, method: .get, path: "/pictures/search", query: ["key": "sunset"], headers: ["X-Signature": "signed"])
            #expect(server.requestCount == 0)
        }
    }

    @Test func validationEnvelopeAndDidReceiveRunOnFixtureBytes() async throws {
        let store = try #require(MockFixtures.store)
        try await withMockedLoopback([MockMiddleware(.fixtures(store))]) { server, client in
            let invalid = await #expect(throws: CurlewError.self) { try await client.send(MockSearch()) { $0.mockScenario = "invalid" } }
            #expect(invalid?.code == .validationFailed)
            #expect(invalid?.message == "total: must not be negative")

            let album = try await client.response(for: MockEnveloped())
            #expect(album.value == MockAlbum(name: "Harbor", count: 4))
            #expect(album.businessCode == "0")
            #expect(album.businessMessage == "fine")

            let refused = await #expect(throws: CurlewError.self) { try await client.send(MockEnveloped()) { $0.mockScenario = "refused" } }
            #expect(refused?.code == .serverError)
            #expect(refused?.businessCode == "40001")
            #expect(refused?.message == "quota exceeded")
            #expect(refused?.stage == .envelope)
            #expect(server.requestCount == 0)
        }
    }

    @Test func mocksAreSwitchedOnPerCallPerEndpointTypeAndOffPerCall() async throws {
        let store = try #require(MockFixtures.store)
        try await withMockedLoopback([]) { server, client in
            let perCall = try await client.response(for: MockSearch()) { $0.mock = .fixtures(store) }
            #expect(perCall.source.detail == "MockSearch.json")
            let perType = try await client.response(for: MockSearchAlwaysMocked())
            #expect(perType.source.detail == "MockSearch.json")
            #expect(server.requestCount == 0)

            let network = try await client.response(for: MockSearch())
            #expect(network.source == .network)
            #expect(network.value.total == 99)
            #expect(server.requestCount == 1)
        }
        try await withMockedLoopback([MockMiddleware(.fixtures(store))]) { server, client in
            let off = try await client.response(for: MockSearch()) { $0.mock = .off }
            #expect(off.source == .network)
            #expect(server.requestCount == 1)
        }
    }

    @Test func scenariosComeFromTheCallTheTaskOrTheRequestType() async throws {
        let store = try #require(MockFixtures.store)
        try await withMockedLoopback([MockMiddleware(.fixtures(store).clock(.immediate))]) { server, client in
            let empty = try await client.response(for: MockSearch()) { $0.mockScenario = "empty" }
            #expect(empty.value.total == 0)
            #expect(empty.source.detail == "MockSearch.empty.json")
            let fromTask = try await MockScenario.$current.withValue("empty") {
                // the call's own scenario wins over the task's
                (try await client.send(MockSearch()).total, try await client.send(MockSearch()) { $0.mockScenario = "slow" }.total)
            }
            #expect(fromTask == (0, 1))
            let byType = try await MockScenario.$byRequest.withValue(["MockSearch": "empty"]) {
                (try await client.send(MockSearch()).total, try await client.send(MockEnveloped()).name)
            }
            #expect(byType == (0, "Harbor"))
            #expect(try await client.send(MockSearch()).total == 2)
            #expect(server.requestCount == 0)
        }
    }

    @Test(.mockScenario("empty", for: MockSearch.self)) func aTraitChoosesTheScenarioForATest() async throws {
        let store = try #require(MockFixtures.store)
        let client = APIClient(configuration: ClientConfiguration(baseURL: "http://127.0.0.1:9", middleware: [MockMiddleware(.fixtures(store))]))
        #expect(try await client.send(MockSearch()).total == 0)
        #expect(try await client.send(MockEnveloped()).count == 4)
    }

    @Test func metadataGivesStatusHeadersAndADelayAskedOfTheClock() async throws {
        let store = try #require(MockFixtures.store)
        let delays = RecordedDelays()
        try await withMockedLoopback([MockMiddleware(.fixtures(store).clock(delays.clock))]) { server, client in
            let missing = await #expect(throws: CurlewError.self) { try await client.send(MockSearch()) { $0.mockScenario = "missing" } }
            #expect(missing?.code == .unacceptableStatus)
            #expect(missing?.status == .notFound)
            #expect(missing?.headers?[HTTPField.Name("X-Reason")!] == "gone")
            #expect(delays.requested == [])

            let slow = try await client.response(for: MockSearch()) { $0.mockScenario = "slow" }
            #expect(slow.value.total == 1)
            #expect(delays.requested == [.milliseconds(1500)])
            #expect(server.requestCount == 0)
        }
    }

    @Test func aSimulatedTransportFailureIsATypedTransportError() async throws {
        let store = try #require(MockFixtures.store)
        let seeing = SeeingMiddleware()
        try await withMockedLoopback([MockMiddleware(.fixtures(store)), seeing]) { server, client in
            let error = await #expect(throws: CurlewError.self) { try await client.send(MockSearch()) { $0.mockScenario = "offline" } }
            #expect(error?.code == .cannotConnect)
            // Named by the metadata file the scenario has (there is no MockSearch.offline.json).
            #expect(error?.message == "simulated cannotConnect (MockSearch.offline.meta.json)")
            #expect(error?.level == .transport)
            #expect(error?.stage == .transport)
            #expect(seeing.observed == ["error cannotConnect"])
            #expect(server.requestCount == 0)
        }
    }

    @Test func aMissingFixtureOrBadMetadataIsATypedErrorNeverTheNetwork() async throws {
        let store = try #require(MockFixtures.store)
        try await withMockedLoopback([MockMiddleware(.fixtures(store))]) { server, client in
            let missing = await #expect(throws: CurlewError.self) { try await client.send(MockSearch()) { $0.mockScenario = "nope" } }
            #expect(missing?.code == .fixtureNotFound)
            #expect(missing?.message == "no fixture MockSearch.nope.json (nor MockSearch.nope.meta.json) in \(store.directory)")
            let broken = await #expect(throws: CurlewError.self) { try await client.send(MockSearch()) { $0.mockScenario = "broken" } }
            #expect(broken?.code == .fixtureInvalid)
            #expect(broken?.message.contains("unknown member \"stauts\"") == true)
            #expect(server.requestCount == 0)
        }
    }

    @Test(arguments: ["../MockSearch", "%2e%2e%2fMockSearch", "/etc/passwd", "a\u{0}b", "..", "sub/../x", "meta", ""])
    func aScenarioThatCouldLeaveTheDirectoryIsRejected(scenario: String) async throws {
        let store = try #require(MockFixtures.store)
        try await withMockedLoopback([MockMiddleware(.fixtures(store))]) { server, client in
            let error = await #expect(throws: CurlewError.self) { try await client.send(MockSearch()) { $0.mockScenario = scenario } }
            #expect(error?.code == .fixturePathRejected)
            #expect(server.requestCount == 0)
        }
    }

    @Test func aNameOrSymbolicLinkLeadingOutsideIsRejectedByComponentsNotPrefix() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-fixtures-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: root) }
        try FileManager.default.createDirectory(atPath: root + "/fixtures", withIntermediateDirectories: true)
        try FileManager.default.createDirectory(atPath: root + "/fixtures-evil", withIntermediateDirectories: true)
        try Data(#"{"total": 5, "pictures": []}"#.utf8).write(to: URL(fileURLWithPath: root + "/fixtures-evil/Secret.json"))
        try Data(#"{"total": 3, "pictures": []}"#.utf8).write(to: URL(fileURLWithPath: root + "/fixtures/Real.json"))
        try FileManager.default.createSymbolicLink(atPath: root + "/fixtures/MockSearch.json", withDestinationPath: "../fixtures-evil/Secret.json")
        try FileManager.default.createSymbolicLink(atPath: root + "/fixtures/MockSearch.inside.json", withDestinationPath: "Real.json")
        let store = try FixtureStore(directory: root + "/fixtures")

        let outside = #expect(throws: CurlewError.self) { try store.answer(for: "MockSearch") }
        #expect(outside?.code == .fixturePathRejected)
        #expect(outside?.message.contains("resolves outside") == true)
        let named = #expect(throws: CurlewError.self) { try store.answer(for: "../fixtures-evil/Secret") }
        #expect(named?.code == .fixturePathRejected)
        #expect(try store.answer(for: "MockSearch", scenario: "inside").body == Data(#"{"total": 3, "pictures": []}"#.utf8))

        try await withMockedLoopback([MockMiddleware(.fixtures(store))]) { server, client in
            let error = await #expect(throws: CurlewError.self) { try await client.send(MockSearch()) }
            #expect(error?.code == .fixturePathRejected)
            let renamed = await #expect(throws: CurlewError.self) {
                try await client.send(MockSearch()) { $0.mock = .fixtures(store, name: "/etc/passwd") }
            }
            #expect(renamed?.code == .fixturePathRejected)
            #expect(server.requestCount == 0)
        }
    }

    @Test func aStreamedCallGetsTheFixtureBytesAsAStream() async throws {
        let store = try #require(MockFixtures.store)
        try await withMockedLoopback([MockMiddleware(.fixtures(store))]) { server, client in
            let streamed = try await client.stream(MockSearch()) { $0.mockScenario = "empty" }
            var bytes = Data()
            for try await chunk in streamed.value { bytes.append(chunk) }
            #expect(bytes == Data(#"{"total": 0, "pictures": []}"#.utf8) + Data("\n".utf8))
            #expect(server.requestCount == 0)
        }
    }

    @Test func aDownloadOfAMockedCallLandsTheAnswerOnDiskAndItsHeadIsJudgedAsTheNetworksWouldBe() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-mock-download-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let picture = Data((0..<300).map { UInt8($0 % 251) })
        let stub = MockStub(MockAnswer(headers: [.contentType: "image/jpeg"], body: picture))
        let store = try #require(MockFixtures.store)
        try await withMockedLoopback([]) { server, client in
            let file = try await client.download(MockSearch(), to: folder.appendingPathComponent("picture.jpg")) { $0.mock = .stub(stub) }
            #expect(try Data(contentsOf: file.url) == picture)
            #expect(file.length == 300)
            #expect(file.status == .ok)
            #expect(file.mimeType == "image/jpeg")
            // The fixture's JSON head reaches the download as a network head would: refused.
            let refused = await #expect(throws: CurlewError.self) {
                try await client.download(MockSearch(), to: folder.appendingPathComponent("search.json")) { $0.mock = .fixtures(store) }
            }
            #expect(refused?.code == .unexpectedContentType)
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("search.json").path))
            #expect(server.requestCount == 0)
        }
    }
}
