import Curlew
import Foundation
import Testing
import TestSupport

/// Waiting for a queue to drain or for tracked calls to finish ends when the waiting task is
/// cancelled, and taking a held queue's waiters away opens its gate as `resume` does: with a
/// `queueResumed` event.
@Suite("Queue waits and their cancellation", .timeLimit(.minutes(1)))
struct QueueWaitCancellationTests {
    @Test func aCancelledWaitUntilIdleReturns() async throws {
        let queues = QueueActor()
        await queues.hold("q")
        let held = Task { try await queues.run(in: "q") {} }
        #expect(await eventually { await queues.status(of: "q").waiting == 1 })
        let idle = Task { await queues.waitUntilIdle("q") }
        try await Task.sleep(for: .milliseconds(20))
        idle.cancel()
        await idle.value
        // The queue is still held with its waiter: it never drained.
        #expect(await queues.status(of: "q").waiting == 1)
        await queues.cancelHeld("q")
        let outcome = await held.result
        #expect(throws: CancellationError.self) { try outcome.get() }
    }

    @Test func aCancelledWaitUntilFinishedReturns() async throws {
        let tracker = RequestTracker()
        let ticket = tracker.ticket()
        let waiting = Task { await tracker.waitUntilFinished() }
        try await Task.sleep(for: .milliseconds(20))
        waiting.cancel()
        await waiting.value
        #expect(tracker.outstanding == 1)
        _ = ticket
    }

    @Test func cancellingAHeldQueuesWaitersPublishesItsResumption() async throws {
        let queues = QueueActor()
        let events = queues.events
        await queues.hold("q")
        await queues.cancelHeld("q")
        var kinds: [ClientEvent.Kind] = []
        for await event in events where event.kind != .queueDrained {
            kinds.append(event.kind)
            if kinds.count == 2 { break }
        }
        #expect(kinds == [.queueHeld, .queueResumed])
        #expect(await queues.status(of: "q").isHeld == false)
    }
}
