import Curlew
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// A call to any path whose answer is the path the server saw.
struct AuditPath: Endpoint {
    typealias Response = String
    var path: String
}

/// Names a test opens one by one: the loopback server holds `/hold/<name>` until `<name>` is
/// opened (or the client leaves); `/fail/<name>` likewise, then answers 500. Everything else
/// answers its path at once.
final class AuditGates: Sendable {
    private let opened = Mutex<Set<String>>([])

    func open(_ name: String) { opened.withLock { _ = $0.insert(name) } }
    func isOpen(_ name: String) -> Bool { opened.withLock { $0.contains(name) } }

    var handler: @Sendable (ServerRequest) async -> ServerResponse {
        { request in
            let parts = request.path.split(separator: "/").map(String.init)
            if parts.count == 2, parts[0] == "hold" || parts[0] == "fail" {
                while !self.isOpen(parts[1]), !request.connection.isClosed { try? await Task.sleep(for: .milliseconds(5)) }
                if parts[0] == "fail" { return .text("no", status: 500) }
            }
            return .text(request.path)
        }
    }
}

/// HAccess's `initQueueWithName:maxConcurrent:` and `startWithQueueName`, Monkey's
/// `wait(for:tag:)` / `resumWaitRequests` / `cancelAllWaitRequest`, as a team porting them would
/// check them: what starts when, what is sent, what a cancelled or timed-out waiter leaves behind.
@Suite("Migration audit: queues and holds", .timeLimit(.minutes(1)))
struct MigrationQueueAuditTests {
    /// Lowering a limit at runtime: the calls already running go on, and a waiting call starts
    /// only once the running ones are below the new limit.
    @Test func loweringALimitAtRuntimeKeepsWaitersBackUntilRunningCallsAreBelowIt() async throws {
        let gates = AuditGates()
        try await withLoopback(handler: gates.handler) { server, _, transport in
            let queues = QueueActor(limits: ["images": 2])
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL), transport: transport, queues: queues)
            let first = Task { try await client.send(AuditPath(path: "hold/a"), queue: "images") }
            let second = Task { try await client.send(AuditPath(path: "hold/b"), queue: "images") }
            #expect(await eventually { server.inFlight(path: "/hold/a") == 1 && server.inFlight(path: "/hold/b") == 1 })
            let third = Task { try await client.send(AuditPath(path: "c"), queue: "images") }
            #expect(await eventually { await queues.status(of: "images").waiting == 1 })
            await queues.setLimit(1, for: "images")
            gates.open("a")
            let value1 = try await first.value
            #expect(value1 == "/hold/a")
            // One call still runs and the limit is 1 now: the third waits.
            let afterFirst = await queues.status(of: "images")
            #expect(afterFirst.running == 1)
            #expect(afterFirst.waiting == 1)
            #expect(server.requests(path: "/c").isEmpty)
            gates.open("b")
            let value2 = try await second.value
            #expect(value2 == "/hold/b")
            let value3 = try await third.value
            #expect(value3 == "/c")
            #expect(server.requests(path: "/c").count == 1)
            let idle = await queues.status(of: "images")
            #expect(idle.running == 0)
            #expect(idle.waiting == 0)
        }
    }

    /// A high-priority waiter cancelled while it waits leaves without a request and without
    /// touching the running count; the normal one behind it gets the slot when it frees.
    @Test func aCancelledHighPriorityWaiterIsNeverSentAndFreesNothing() async throws {
        let gates = AuditGates()
        try await withLoopback(handler: gates.handler) { server, _, transport in
            let queues = QueueActor()
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL), transport: transport, queues: queues)
            let running = Task { try await client.send(AuditPath(path: "hold/first"), queue: "serial") }
            #expect(await eventually { server.inFlight(path: "/hold/first") == 1 })
            let urgent = Task { try await client.send(AuditPath(path: "urgent"), queue: "serial", priority: .high) }
            #expect(await eventually { await queues.status(of: "serial").waiting == 1 })
            let normal = Task { try await client.send(AuditPath(path: "normal"), queue: "serial") }
            #expect(await eventually { await queues.status(of: "serial").waiting == 2 })
            urgent.cancel()
            await #expect(throws: CancellationError.self) { try await urgent.value }
            let afterCancel = await queues.status(of: "serial")
            #expect(afterCancel.running == 1)
            #expect(afterCancel.waiting == 1)
            #expect(server.requests(path: "/normal").isEmpty)
            gates.open("first")
            let value4 = try await running.value
            #expect(value4 == "/hold/first")
            let value5 = try await normal.value
            #expect(value5 == "/normal")
            #expect(server.requests(path: "/urgent").isEmpty)
            #expect(server.requests.map(\.path) == ["/hold/first", "/normal"])
        }
    }

    /// HAccess's `queue:finish:` after starting each download in a queue of two: a tracker's
    /// tickets, taken before the calls start, return only once every call is done, including the
    /// ones that had not reached the queue yet and one that failed.
    @Test func aTrackerWaitsForEveryCallOfAQueueLikeQueueFinish() async throws {
        let gates = AuditGates()
        gates.open("3")
        try await withLoopback(handler: gates.handler) { server, _, transport in
            let queues = QueueActor(limits: ["imageDownloadQueue": 2])
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL), transport: transport, queues: queues)
            let tracker = RequestTracker()
            for index in 1...5 {
                let ticket = tracker.ticket()
                let path = index == 3 ? "fail/3" : "image/\(index)"
                Task {
                    _ = try? await client.send(AuditPath(path: path)) {
                        $0.queue = "imageDownloadQueue"
                        $0.ticket = ticket
                    }
                }
            }
            #expect(tracker.outstanding == 5)
            await tracker.waitUntilFinished()
            #expect(tracker.outstanding == 0)
            #expect(server.requestCount == 5)
            let idle = await queues.status(of: "imageDownloadQueue")
            #expect(idle.running == 0)
            #expect(idle.waiting == 0)
        }
    }

    /// A call kept waiting by a `.manually` hold under `withDeadline` leaves at the deadline with
    /// `.deadlineExceeded`, unsent; the hold stays in force for the others and its release lets
    /// them through. (It used to wait for as long as the hold lasted.)
    @Test func aHeldCallLeavesAtItsDeadlineUnsentAndTheHoldStays() async throws {
        try await withLoopback(handler: AuditGates().handler) { server, _, transport in
            let holds = RequestHolds()
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [holds]), transport: transport)
            _ = try await client.send(AuditPath(path: "login")) { $0.holdsLaterRequests = RequestHold(tag: "login", release: .manually) }
            let error = await #expect(throws: CurlewError.self) {
                try await withDeadline(in: .milliseconds(300)) { try await client.send(AuditPath(path: "late")) }
            }
            #expect(error?.code == .deadlineExceeded)
            #expect(error?.stage == .deadline)
            #expect(error?.message == "the deadline passed while the call waited for the hold \"login\"; nothing was sent")
            #expect(error?.request?.redactedURL.hasSuffix("/late") == true)
            #expect(server.requests(path: "/late").isEmpty)
            #expect(holds.heldCount("login") == 0)
            #expect(holds.activeTags == ["login"])

            let next = Task { try await client.send(AuditPath(path: "next")) }
            #expect(await eventually { holds.heldCount("login") == 1 })
            holds.release("login")
            let value6 = try await next.value
            #expect(value6 == "/next")
            #expect(server.requests.map(\.path) == ["/login", "/next"])
        }
    }

    /// `.onSuccess`: a holding call that is cancelled has not succeeded, so the calls it held
    /// fail with `CancellationError`, unsent. `.whenFinished`: a holding call that fails still
    /// lets the held calls go.
    @Test func aCancelledOnSuccessHolderCancelsTheHeldAndAFailedWhenFinishedHolderReleasesThem() async throws {
        let gates = AuditGates()
        try await withLoopback(handler: gates.handler) { server, _, transport in
            let holds = RequestHolds()
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [holds]), transport: transport)
            let login = Task {
                try await client.send(AuditPath(path: "hold/login")) { $0.holdsLaterRequests = RequestHold(tag: "login", release: .onSuccess) }
            }
            #expect(await eventually { server.inFlight(path: "/hold/login") == 1 })
            let held = Task { try await client.send(AuditPath(path: "after-login")) }
            #expect(await eventually { holds.heldCount("login") == 1 })
            login.cancel()
            await #expect(throws: CancellationError.self) { try await login.value }
            await #expect(throws: CancellationError.self) { try await held.value }
            #expect(server.requests(path: "/after-login").isEmpty)
            #expect(holds.activeTags.isEmpty)

            let splash = Task {
                try await client.send(AuditPath(path: "fail/splash")) { $0.holdsLaterRequests = RequestHold(tag: "splash", release: .whenFinished) }
            }
            #expect(await eventually { server.inFlight(path: "/fail/splash") == 1 })
            let released = Task { try await client.send(AuditPath(path: "after-splash")) }
            #expect(await eventually { holds.heldCount("splash") == 1 })
            #expect(server.requests(path: "/after-splash").isEmpty)
            gates.open("splash")
            let failure = await #expect(throws: CurlewError.self) { try await splash.value }
            #expect(failure?.code == .unacceptableStatus)
            #expect(failure?.status?.code == 500)
            let value7 = try await released.value
            #expect(value7 == "/after-splash")
            #expect(holds.activeTags.isEmpty)
        }
    }
}
