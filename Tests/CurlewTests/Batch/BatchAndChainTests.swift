import Curlew
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// `/item/N` answers N, except ids listed in the path `/fail/N` which answer 500.
struct ItemRequest: Endpoint {
    typealias Response = String
    var id: Int
    var fails = false
    var path: String { fails ? "fail/\(id)" : "item/\(id)" }
}

/// Counts calls from callbacks that may run on any thread.
final class Counter: Sendable {
    private let value = Mutex<[Int]>([])
    func add(_ index: Int) { value.withLock { $0.append(index) } }
    var indices: [Int] { value.withLock { $0 } }
}

let itemHandler: @Sendable (ServerRequest) async -> ServerResponse = { request in
    let parts = request.path.split(separator: "/")
    if parts.first == "fail" { return .json(#"{"error":"boom"}"#, status: 500) }
    if parts.first == "hold" {
        await request.connection.closed()
        return .text("")
    }
    return .text(String(parts.last ?? ""))
}

@Suite("Batch and chain against a loopback server")
struct BatchAndChainTests {
    static let failing: Set<Int> = [2, 5, 11, 17, 19]

    @Test func collectAllReturnsEveryResultInOrder() async throws {
        try await withLoopback(handler: itemHandler) { server, client, _ in
            let requests = (0..<20).map { ItemRequest(id: $0, fails: Self.failing.contains($0)) }
            let completed = Counter()
            let batch = await client.batch(requests) { index, _ in completed.add(index) }
            #expect(batch.results.count == 20)
            #expect(batch.values == (0..<20).filter { !Self.failing.contains($0) }.map(String.init))
            #expect(batch.failedRequests.map(\.id) == [2, 5, 11, 17, 19])
            #expect(batch.failures.allSatisfy { ($0.error as? CurlewError)?.code == .unacceptableStatus })
            #expect(!batch.allSucceeded)
            #expect(completed.indices.sorted() == Array(0..<20))
            #expect(server.requestCount == 20)
        }
    }

    @Test func failFastCancelsTheRest() async throws {
        try await withLoopback(handler: itemHandler) { server, client, _ in
            // One failure and nineteen requests the server holds until the client gives up.
            let holding = (0..<19).map { id in HoldRequest(id: id) }
            let batch = await client.batch(
                operations: [{ @Sendable client in try await client.send(ItemRequest(id: 99, fails: true)) }]
                    + holding.map { request in { @Sendable client in try await client.send(request) } },
                options: BatchOptions(failsFast: true))
            #expect(batch.count == 20)
            guard case .failure(let first as CurlewError) = batch[0] else {
                Issue.record("the failing member must fail")
                return
            }
            #expect(first.code == .unacceptableStatus)
            // The others were cancelled by the batch: `CancellationError`, as everywhere in Curlew.
            for result in batch.dropFirst() {
                if case .failure(let error) = result {
                    #expect(error is CancellationError)
                } else {
                    Issue.record("expected cancellation, got \(result)")
                }
            }
            // Every held request that reached the server was abandoned by the client.
            #expect(await eventually { server.disconnectsDuringResponse == server.requestCount - 1 })
        }
    }

    /// Cancelling the task that awaits a batch cancels its members, and each reports
    /// `CancellationError` — the spelling `send` and chains use — in both kinds of batch.
    @Test func aCancelledBatchReportsCancellationErrorForEveryMember() async throws {
        try await withLoopback(handler: itemHandler) { server, client, _ in
            let batch = Task { await client.batch((0..<3).map { HoldRequest(id: $0) }) }
            #expect(await eventually { server.requestCount == 3 })
            batch.cancel()
            let results = await batch.value.results
            #expect(results.count == 3)
            for result in results {
                guard case .failure(let error) = result else {
                    Issue.record("expected cancellation, got \(result)")
                    continue
                }
                #expect(error is CancellationError)
            }

            let pair = Task { await client.batch(HoldRequest(id: 10), HoldRequest(id: 11)) }
            #expect(await eventually { server.requestCount == 5 })
            pair.cancel()
            let (first, second) = await pair.value
            for member in [first, second] {
                guard case .failure(let error) = member else {
                    Issue.record("expected cancellation, got \(member)")
                    continue
                }
                #expect(error is CancellationError)
            }
        }
    }

    @Test func concurrencyCapIsHeld() async throws {
        try await withLoopback(handler: slowHandler) { server, client, _ in
            let batch = await client.batch((0..<24).map { SlowRequest(id: $0) }, options: BatchOptions(maximumConcurrency: 3))
            #expect(batch.allSucceeded)
            #expect(batch.values == (0..<24).map(String.init))
            #expect(server.peakInFlight(path: "/slow") <= 3)
        }
    }

    @Test func deadlineKeepsFinishedResultsAndTimesOutTheRest() async throws {
        try await withLoopback(handler: itemHandler) { _, client, _ in
            let batch = await client.batch(
                operations: (0..<6).map { id in
                    { @Sendable client in
                        id < 3 ? try await client.send(ItemRequest(id: id)) : try await client.send(HoldRequest(id: id))
                    }
                },
                options: BatchOptions(deadline: .seconds(1)))
            #expect(batch.prefix(3).map { try? $0.get() } == ["0", "1", "2"])
            for result in batch.dropFirst(3) {
                if case .failure(let error as CurlewError) = result {
                    #expect(error.code == .totalTimeout)
                    #expect(error.stage == .deadline)
                    #expect(error.message == "the batch deadline passed before this request finished")
                } else {
                    Issue.record("expected a timeout, got \(result)")
                }
            }
        }
    }

    @Test func heterogeneousBatchReturnsATuple() async throws {
        try await withLoopback(handler: itemHandler) { _, client, _ in
            let (item, bytes, failed) = await client.batch(ItemRequest(id: 4), FetchBytes(path: "item/7"), ItemRequest(id: 9, fails: true))
            let itemValue = try item.get()
            let bytesValue = try bytes.get()
            #expect(itemValue == "4")
            #expect(bytesValue == Data("7".utf8))
            #expect(throws: CurlewError.self) { try failed.get() }
        }
    }

    @Test func chainStopsAtTheFailedStepAndKeepsEarlierResponses() async throws {
        try await withLoopback(handler: itemHandler) { server, client, _ in
            let seen = Counter()
            let chain =
                client
                .chain(ItemRequest(id: 1), name: "first", onComplete: { _ in seen.add(1) })
                .then("second", onComplete: { _ in seen.add(2) }) { previous in ItemRequest(id: (Int(previous) ?? 0) + 1, fails: true) }
                .then("third", onComplete: { _ in seen.add(3) }) { previous in ItemRequest(id: 3) }
            let error = await #expect(throws: CurlewError.self) { _ = try await chain.run() }
            #expect(error?.stage == .chainStep(2, name: "second"))
            #expect(error?.stage?.step == 2)
            #expect(error?.code == .unacceptableStatus)
            #expect(error?.status?.code == 500)
            #expect(error?.completedSteps.count == 1)
            #expect(error?.completedSteps.first as? String == "1")
            #expect(error?.description.contains("\"second\"") == true)
            #expect(seen.indices == [1])
            #expect(server.requests.map(\.path) == ["/item/1", "/fail/2"])
        }
    }

    @Test func chainPassesTypedResponsesAlong() async throws {
        try await withLoopback(handler: itemHandler) { server, client, _ in
            let result =
                try await client
                .chain(ItemRequest(id: 2))
                .then { ItemRequest(id: (Int($0) ?? 0) * 10) }
                .then { FetchBytes(path: "item/\($0)5") }
                .run()
            #expect(result == Data("205".utf8))
            #expect(server.requests.map(\.path) == ["/item/2", "/item/20", "/item/205"])
        }
    }

    @Test func cancellingAChainStopsItBeforeLaterSteps() async throws {
        try await withLoopback(handler: itemHandler) { server, client, _ in
            let task = Task {
                try await client.chain(HoldRequest(id: 1), name: "hold").then("never") { _ in ItemRequest(id: 2) }.run()
            }
            await waitForRequests(server, count: 1)
            task.cancel()
            let result = await task.result
            guard case .failure(let error) = result else {
                Issue.record("expected a cancellation, got \(result)")
                return
            }
            #expect(error is CancellationError, "a cancelled chain surfaces as CancellationError")
            try await Task.sleep(for: .milliseconds(50))
            #expect(server.requests.map(\.path) == ["/hold/1"])
        }
    }

    @Test func batchesInsideChainsAndChainsInsideBatches() async throws {
        try await withLoopback(handler: itemHandler) { server, client, _ in
            let total =
                try await client
                .chain(ItemRequest(id: 3))
                .then("fan-out") { count, client in
                    await client.batch((0..<(Int(count) ?? 0)).map { ItemRequest(id: 100 + $0) }).values
                }
                .run()
            #expect(total == ["100", "101", "102"])

            let chains = (0..<4).map { id in
                { @Sendable (client: APIClient) in
                    try await client.chain(ItemRequest(id: id)).then { ItemRequest(id: (Int($0) ?? 0) + 50) }.run()
                }
            }
            let results = await client.batch(operations: chains)
            #expect(results.map { try? $0.get() } == ["50", "51", "52", "53"])
            #expect(server.requestCount == 4 + 8)
        }
    }
}

/// `/hold/N` — the server answers only when the client has gone.
struct HoldRequest: Endpoint {
    typealias Response = String
    var id: Int
    var path: String { "hold/\(id)" }
}
