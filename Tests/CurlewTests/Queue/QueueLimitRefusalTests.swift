import Curlew
import Foundation
import LoopbackServer
import Testing
import TestSupport

/// A queue limit below 1 cannot be honoured: it is refused with a typed error, not turned into a
/// serial queue in silence (a port of `NSOperationQueue`'s `-1`, "no limit", would otherwise run
/// one call at a time without a word).
@Suite("Queue limits below 1", .timeLimit(.minutes(1)))
struct QueueLimitRefusalTests {
    @Test(arguments: [0, -1])
    func aQueueCreatedWithALimitBelowOneFailsItsCallsUnsentUntilGivenAValidOne(limit: Int) async throws {
        try await withLoopback(handler: { .text($0.path) }) { server, _, transport in
            let queues = QueueActor(limits: ["partner": limit, "images": 2])
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL), transport: transport, queues: queues)
            let error = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "refused"), queue: "partner") }
            #expect(error?.code == .invalidConnectionSettings)
            #expect(error?.stage == .queue)
            #expect(error?.request?.description == "GET \(server.baseURL)/refused")
            #expect(error?.message.hasPrefix("the queue \"partner\" has the limit \(limit); a limit must be at least 1") == true)
            // Other queues are not affected.
            let image = try await client.send(Send(path: "image"), queue: "images")
            #expect(image == "/image")

            await queues.setLimit(3, for: "partner")
            let accepted = try await client.send(Send(path: "accepted"), queue: "partner")
            #expect(accepted == "/accepted")
            #expect(server.requests.map(\.path) == ["/image", "/accepted"])
        }
    }

    /// Set at run time, a limit below 1 stops nothing that runs: the call in flight completes;
    /// the next call to the queue fails unsent.
    @Test func aLimitBelowOneSetAtRunTimeLetsRunningWorkFinishAndRefusesNewCalls() async throws {
        let gate = TestGate()
        try await withLoopback(handler: gate.holdingFirstNumber) { server, _, transport in
            let queues = QueueActor(limits: ["partner": 2])
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL), transport: transport, queues: queues)
            let running = Task { try await client.send(Send(path: "n/1"), queue: "partner") }
            #expect(await eventually { server.inFlight(path: "/n/1") == 1 })

            await queues.setLimit(0, for: "partner")
            let error = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "n/2"), queue: "partner") }
            #expect(error?.code == .invalidConnectionSettings)
            #expect(error?.stage == .queue)

            gate.open()
            let ran = try await running.value
            #expect(ran == "/n/1")
            #expect(server.requests.map(\.path) == ["/n/1"])
        }
    }
}
