import Curlew
import CurlewTesting
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport

@Suite("One event model")
struct EventTests {
    @Test func twoSubscribersBothSeeEveryEventOfATwentyRequestBatch() async throws {
        try await withLoopback(handler: { request in .text(request.path) }) { server, client, _ in
            let first = client.events
            let second = client.events
            let readers = [first, second].map { stream in Task { await collectEvents(stream, until: 20, of: .finished) } }
            let batch = await client.batch((0..<20).map { Send(path: "item/\($0)") })
            #expect(batch.values.count == 20)
            let (a, b) = (await readers[0].value, await readers[1].value)
            for events in [a, b] {
                let finished = events.filter { $0.kind == .finished }
                #expect(finished.count == 20)
                #expect(Set(finished.compactMap(\.requestID)).count == 20, "every call has its own id")
                #expect(events.filter { $0.kind == .started }.count == 20)
                #expect(events.filter { $0.kind == .attempt }.count == 20)
                #expect(events.allSatisfy { $0.requestID != nil && $0.requestName == "Send" })
                #expect(finished.allSatisfy { $0.status?.code == 200 && $0.source == .network })
            }
            let describe = { (events: [ClientEvent]) in Set(events.map { "\($0.kind) \($0.requestID.map(String.init(describing:)) ?? "-")" }) }
            for events in [a, b] {
                let kinds = events.filter { $0.kind != .progress }.map(\.kind)
                #expect(kinds.count == 80, "started, attempt, head received and finished for each of the 20 calls")
                #expect(kinds.filter { $0 == .headReceived }.count == 20)
            }
            #expect(describe(a) == describe(b), "both subscribers saw the same events")
            #expect(server.requestCount == 20)
        }
    }

    @Test func aCallReportsStartedQueuedDequeuedAttemptFinishedInOrder() async throws {
        try await withLoopback(handler: { _ in .text("ok") }) { _, client, _ in
            let events = client.events
            let reader = Task { await collectEvents(events, until: 1, of: .finished) }
            _ = try await client.send(Send(path: "x"), queue: "q")
            let seen = await reader.value
            #expect(seen.filter { $0.kind != .progress }.map(\.kind) == [.started, .queued, .dequeued, .attempt, .headReceived, .finished])
            #expect(seen.filter { $0.kind == .progress }.last?.progress?.bytesReceived == 2, "progress ends at the body's 2 bytes")
            #expect(Set(seen.compactMap(\.requestID)).count == 1)
            #expect(seen[1].queue == "q")
            #expect(seen.last?.metrics != nil, "timings travel on the finished event")
        }
    }

    @Test func aFailedCallReportsFailedWithTheError() async throws {
        try await withLoopback(handler: { _ in .text("nope", status: 404) }) { _, client, _ in
            let events = client.events
            let reader = Task { await collectEvents(events, until: 1, of: .failed) }
            _ = try? await client.send(Send(path: "x"))
            let failed = await reader.value.last
            #expect(failed?.kind == .failed)
            #expect(failed?.error?.code == .unacceptableStatus)
            #expect(failed?.status?.code == 404)
        }
    }

    /// Resuming a queue that was not held publishes nothing: the next event a subscriber sees
    /// is the hold that follows.
    @Test func resumingAnOpenQueuePublishesNothing() async throws {
        let queues = QueueActor()
        let stream = queues.events
        await queues.resume("q")
        await queues.hold("q")
        var kinds: [ClientEvent.Kind] = []
        for await event in stream {
            kinds.append(event.kind)
            break
        }
        #expect(kinds == [.queueHeld])
    }

    @Test func queueEventsReachEverySubscriber() async throws {
        let queues = QueueActor()
        let first = queues.events
        let second = queues.events
        await queues.hold("q")
        await queues.resume("q")
        for stream in [first, second] {
            var kinds: [ClientEvent.Kind] = []
            for await event in stream {
                kinds.append(event.kind)
                if kinds.count == 2 { break }
            }
            #expect(kinds == [.queueHeld, .queueResumed])
        }
    }

    @Test func aTrackerWaitsForCallsThatHaveNotReachedTheQueueYet() async throws {
        try await withLoopback(handler: { _ in
            try? await Task.sleep(for: .milliseconds(20))
            return .text("ok")
        }) { server, client, _ in
            let tracker = RequestTracker()
            let done = Counter2()
            for index in 0..<5 {
                let ticket = tracker.ticket()
                // Started in detached tasks that may not have run at all when we start waiting.
                Task.detached {
                    _ = try? await client.send(Send(path: "p/\(index)")) {
                        $0.queue = "pages"; $0.ticket = ticket
                    }
                    done.append("done")
                }
            }
            #expect(tracker.outstanding == 5)
            await tracker.waitUntilFinished()
            #expect(server.requestCount == 5, "every call reached the server before the wait returned")
            #expect(tracker.outstanding == 0)
            #expect(await eventually { done.all.count == 5 })
        }
    }

    /// A ticket taken for a call that never starts (an early `return`, a `guard` that fails) is
    /// finished when it is released: before, `waitUntilFinished()` waited for it for ever.
    @Test func aTicketReleasedWithoutACallCountsAsFinished() async throws {
        let tracker = RequestTracker()
        let kept = tracker.ticket()
        do {
            let lost = tracker.ticket()
            _ = lost
        }
        #expect(tracker.outstanding == 1, "the released ticket is finished, the kept one is not")
        kept.finish()
        kept.finish()
        #expect(tracker.outstanding == 0)
        await tracker.waitUntilFinished()
    }
}
