@testable import Curlew
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// `.seconds(Int64.max)` is how a caller says "no deadline": a wait under such a deadline, a batch
/// with such a deadline and a drain with such a grace period used to stop the process (sleeping
/// to that instant overflows the clock's count of seconds). They now behave as having none.
@Suite("Deadlines that mean forever", .timeLimit(.minutes(1)))
struct ForeverDeadlineTests {
    @Test func aCallWaitingInAQueueUnderAForeverDeadlineWaitsItsTurn() async throws {
        let gate = TestGate()
        try await withLoopback(handler: gate.holdingFirstNumber) { server, _, transport in
            let queues = QueueActor(limits: ["one": 1])
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL), transport: transport, queues: queues)
            let first = Task { try await client.send(Numbered(index: 1), queue: "one") }
            await waitForRequests(server, count: 1)
            let second = Task { try await withDeadline(in: .seconds(Int64.max)) { try await client.send(Numbered(index: 2), queue: "one") } }
            #expect(await eventually { await queues.status(of: "one").waiting == 1 })
            gate.open()
            let answers = [try await first.value, try await second.value]
            #expect(answers == ["/n/1", "/n/2"])
        }
    }

    @Test func aBatchWithAForeverDeadlineRunsToTheEnd() async throws {
        try await withLoopback(handler: { .text($0.path) }) { _, client, _ in
            let batch = await client.batch(
                operations: (0..<3).map { index in { @Sendable client in try await client.send(Numbered(index: index)) } },
                options: BatchOptions(deadline: .seconds(Int64.max)))
            #expect(batch.map { try? $0.get() } == ["/n/0", "/n/1", "/n/2"])
        }
    }

    @Test func aServiceWithAForeverGracePeriodShutsDownOnceIdle() async throws {
        let server = try await LoopbackServer.start { .text($0.path) }
        defer { Task { await server.shutdown() } }
        let service = TransportService(gracePeriod: .seconds(Int64.max))
        let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL), transport: service)
        let answer = try await client.send(Numbered(index: 7))
        #expect(answer == "/n/7")
        await service.shutdown()
        let refused = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 8)) }
        #expect(refused?.code == .shutdown)
        #expect(server.requestCount == 1)
    }
}
