import Curlew
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// Batch options a batch cannot honour are refused, not clamped: a `maximumConcurrency` of 0 ran
/// the members one at a time, and a `deadline` of zero started every member and then stopped it.
@Suite("Batch options out of range", .timeLimit(.minutes(1)))
struct BatchOptionsRefusalTests {
    static let refused: [(BatchOptions, String)] = [
        (BatchOptions(maximumConcurrency: 0), "BatchOptions.maximumConcurrency must be at least 1 (nil runs every member at once), not 0"),
        (BatchOptions(maximumConcurrency: -2), "BatchOptions.maximumConcurrency must be at least 1 (nil runs every member at once), not -2"),
        (BatchOptions(deadline: .zero), "BatchOptions.deadline must be longer than zero, not 0.0 seconds"),
        (BatchOptions(failsFast: true, deadline: .seconds(-1)), "BatchOptions.deadline must be longer than zero, not -1.0 seconds"),
    ]

    @Test(arguments: 0..<refused.count)
    func everyMemberOfABatchWithARefusedOptionFailsUnsent(case index: Int) async throws {
        let (options, message) = Self.refused[index]
        try await withLoopback(handler: { .text($0.path) }) { server, client, _ in
            let reported = Mutex<[Int]>([])
            let batch = await client.batch((0..<3).map { Numbered(index: $0) }, options: options) { index, result in
                if case .failure = result { reported.withLock { $0.append(index) } }
            }
            #expect(batch.results.count == 3)
            for (member, failure) in batch.failures.enumerated() {
                let error = failure.error as? CurlewError
                #expect(failure.index == member)
                #expect(error?.code == .invalidConnectionSettings)
                #expect(error?.stage == .configuration)
                #expect(error?.message == "\(message); nothing was sent")
                #expect(error?.request?.description == "GET \(server.baseURL)/n/\(member)")
            }
            #expect(batch.failures.count == 3)
            #expect(reported.withLock { $0.sorted() } == [0, 1, 2])

            let operations = await client.batch(
                operations: [{ @Sendable client in try await client.send(Numbered(index: 9)) }], options: options)
            guard case .failure(let error as CurlewError) = operations.first else {
                Issue.record("the operation must fail unsent, got \(operations)")
                return
            }
            #expect(error.code == .invalidConnectionSettings)
            #expect(error.message == "\(message); nothing was sent")
            #expect(server.requestCount == 0)
        }
    }

    @Test func aConcurrencyOfOneAndAShortDeadlineAreAccepted() async throws {
        try await withLoopback(handler: { .text($0.path) }) { server, client, _ in
            let batch = await client.batch(
                (0..<3).map { Numbered(index: $0) }, options: BatchOptions(maximumConcurrency: 1, deadline: .seconds(30)))
            #expect(batch.values == ["/n/0", "/n/1", "/n/2"])
            #expect(server.requestCount == 3)
        }
    }
}
