import Curlew
import CurlewTesting
import Foundation
import Synchronization
import Testing
import TestSupport

/// Records every callback as a line.
final class RecordingAccessory: Accessory {
    private let lines = Mutex<[String]>([])
    let label: String
    init(_ label: String = "") { self.label = label }

    var events: [String] { lines.withLock { $0 } }

    func willStart(_ activity: Activity) { record("start \(activity.kind) \(activity.name)") }
    func willStop(_ activity: Activity, outcome: Result<Void, any Error>) { record("willStop \(activity.kind) \(Self.word(outcome))") }
    func didStop(_ activity: Activity, outcome: Result<Void, any Error>, duration: Duration) {
        record("didStop \(activity.kind) \(Self.word(outcome))\(duration >= .zero ? "" : " negative")")
    }

    private func record(_ line: String) { lines.withLock { $0.append(label + line) } }

    /// `ok` or `failed`.
    static func word(_ outcome: Result<Void, any Error>) -> String {
        if case .success = outcome { "ok" } else { "failed" }
    }
}

struct QuietRequest: Endpoint {
    typealias Response = String
    var path = "quiet"
    var options: RequestOptions { RequestOptions(usesAccessories: false) }
}

struct ExtraRequest: Endpoint {
    typealias Response = String
    let extra: RecordingAccessory
    var path: String { "extra" }
    var options: RequestOptions { RequestOptions(accessories: [extra]) }
}

@Suite("Accessories")
struct AccessoryTests {
    func client(_ accessory: RecordingAccessory) -> APIClient {
        let transport = MockTransport { request in
            request.url.hasSuffix("/bad") ? .text("no", status: .badRequest, for: request) : .text("fine", for: request)
        }
        return APIClient(configuration: ClientConfiguration(baseURL: "https://api.test", accessories: [accessory]), transport: transport)
    }

    @Test func aRequestReportsStartAndStopInOrder() async throws {
        let accessory = RecordingAccessory()
        _ = try await client(accessory).send(Send(path: "ok"))
        #expect(accessory.events == ["start request Send", "willStop request ok", "didStop request ok"])
    }

    @Test func failuresAreReported() async {
        let accessory = RecordingAccessory()
        _ = await #expect(throws: CurlewError.self) { try await client(accessory).send(Send(path: "bad")) }
        #expect(accessory.events == ["start request Send", "willStop request failed", "didStop request failed"])
    }

    @Test func aRequestCanTurnAccessoriesOffOrAddItsOwn() async throws {
        let accessory = RecordingAccessory()
        let extra = RecordingAccessory("extra ")
        let client = client(accessory)
        _ = try await client.send(QuietRequest())
        #expect(accessory.events.isEmpty)
        _ = try await client.send(ExtraRequest(extra: extra))
        #expect(accessory.events.count == 3)
        #expect(extra.events == ["extra start request ExtraRequest", "extra willStop request ok", "extra didStop request ok"])
    }

    /// A member's own accessories stay quiet inside a batch or a chain also on a client without
    /// accessories of its own: a group never reports member by member.
    @Test func membersOfAGroupStayQuietOnAClientWithoutAccessories() async throws {
        let extra = RecordingAccessory("extra ")
        let transport = MockTransport { request in .text("fine", for: request) }
        let client = APIClient(configuration: ClientConfiguration(baseURL: "https://api.test"), transport: transport)
        let batch = await client.batch([ExtraRequest(extra: extra), ExtraRequest(extra: extra)])
        #expect(batch.failedRequests.isEmpty)
        _ = try await client.chain(ExtraRequest(extra: extra)).run()
        #expect(extra.events.isEmpty)
        _ = try await client.send(ExtraRequest(extra: extra))
        #expect(extra.events.count == 3, "alone, the request reports")
    }

    @Test func aBatchReportsAsOneUnit() async {
        let accessory = RecordingAccessory()
        let batch = await client(accessory).batch((0..<5).map { Send(path: $0 == 3 ? "bad" : "ok\($0)") })
        #expect(batch.failedRequests.count == 1)
        #expect(accessory.events == ["start batch batch of 5 Send", "willStop batch failed", "didStop batch failed"])
    }

    @Test func heterogeneousBatchesAndChainsReportAsOneUnit() async throws {
        let accessory = RecordingAccessory()
        let client = client(accessory)
        _ = await client.batch(Send(path: "a"), FetchBytes(path: "b"))
        _ = try await client.chain(Send(path: "one"), name: "login").then { _ in Send(path: "two") }.run()
        #expect(
            accessory.events == [
                "start batch batch of 2 requests", "willStop batch ok", "didStop batch ok",
                "start chain chain login (2 steps)", "willStop chain ok", "didStop chain ok",
            ])
    }
}
