import Curlew
import Testing

/// A free slot is taken without entering the actor, so a waiter's arrival and its cancellation
/// can race on two threads. These tests cancel callers at every point of that window.
@Suite("QueueActor cancellation racing arrival", .timeLimit(.minutes(1)))
struct QueueCancellationRaceTests {
    /// Each caller waits behind a held slot and is cancelled at once, before, while or after it
    /// is queued. A waiter the cancellation missed would wait for the slot forever: after two
    /// seconds the test records it, and frees the slot so the stranded caller can end.
    @Test func aCallerCancelledWhileArrivingIsNeverLeftWaiting() async throws {
        let queues = QueueActor(limits: ["gate": 1])
        try await queues.acquire("gate")
        var cancelled = 0
        for round in 0..<300 {
            let caller = Task { try await queues.run(in: "gate") { round } }
            for _ in 0..<(round % 4) { await Task.yield() }
            caller.cancel()
            let stranded = Task {
                // Cancelled at once when the caller comes back; only a stranded caller waits this
                // out (long, so that a loaded machine is not taken for one).
                try await Task.sleep(for: .seconds(20))
                await queues.release("gate")
            }
            let result = await caller.result
            stranded.cancel()
            if case .success = await stranded.result {
                Issue.record("round \(round): the cancelled caller stayed queued")
                return
            }
            if case .failure(let error) = result, error is CancellationError { cancelled += 1 }
            #expect(await queues.status(of: "gate").waiting == 0)
        }
        #expect(cancelled == 300)
        #expect(await queues.status(of: "gate").running == 1)
        await queues.release("gate")
        let idle = await queues.status(of: "gate")
        #expect(idle.running == 0 && idle.waiting == 0)
        // The slot is free again: the next caller runs.
        #expect(try await queues.run(in: "gate") { 7 } == 7)
    }

    /// Callers arrive and are cancelled from many tasks at once while others finish: every
    /// caller either ran or failed with `CancellationError`, and the queue ends idle.
    @Test func concurrentArrivalsCancellationsAndReleasesLoseNothing() async throws {
        let queues = QueueActor(limits: ["q": 2])
        let outcomes = await withTaskGroup(of: Bool?.self) { group in
            for index in 0..<400 {
                group.addTask {
                    let caller = Task { try await queues.run(in: "q") { await Task.yield() } }
                    if index % 3 == 0 { caller.cancel() }
                    switch await caller.result {
                    case .success: return true
                    case .failure(let error): return error is CancellationError ? false : nil
                    }
                }
            }
            var outcomes: [Bool?] = []
            for await outcome in group { outcomes.append(outcome) }
            return outcomes
        }
        #expect(outcomes.count == 400)
        #expect(!outcomes.contains(nil))
        // Only the callers that were cancelled may have failed.
        #expect(outcomes.filter { $0 == false }.count <= 134)
        let idle = await queues.status(of: "q")
        #expect(idle.running == 0 && idle.waiting == 0)
    }
}
