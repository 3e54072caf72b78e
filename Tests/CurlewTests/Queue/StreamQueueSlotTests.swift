import Curlew
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// A streamed call is running until its body has arrived: it keeps its queue slot past the head,
/// so a queue's limit counts the streams whose bodies are still coming.
@Suite("Queues and streamed bodies", .timeLimit(.minutes(1)))
struct StreamQueueSlotTests {
    /// Opened by the test; the server's streamed body ends once it is.
    final class Gate: Sendable {
        /// Whether the body may end, guarded by the mutex.
        private let opened = Mutex(false)
        func open() { opened.withLock { $0 = true } }
        var isOpen: Bool { opened.withLock { $0 } }
    }

    /// `/stream` sends a first chunk, then the rest once the gate opens; anything else answers
    /// its path.
    private func handler(_ gate: Gate) -> @Sendable (ServerRequest) async -> ServerResponse {
        { request in
            guard request.path == "/stream" else { return .text(request.path) }
            return .stream { writer in
                try await writer.write("head-")
                while !gate.isOpen { try await Task.sleep(for: .milliseconds(5)) }
                try await writer.write("tail")
            }
        }
    }

    private func client(_ server: LoopbackServer, _ transport: CurlTransport, _ queues: QueueActor) -> APIClient {
        APIClient(configuration: ClientConfiguration(baseURL: server.baseURL), transport: transport, queues: queues)
    }

    @Test func aStreamHoldsItsSlotUntilItsBodyHasArrived() async throws {
        let gate = Gate()
        try await withLoopback(handler: handler(gate)) { server, _, transport in
            let queues = QueueActor(limits: ["partner": 1])
            let client = client(server, transport, queues)
            let response = try await client.stream(FetchText(path: "stream")) { $0.queue = "partner" }
            #expect(await queues.status(of: "partner").running == 1, "the body is still arriving")
            let later = Task { try await client.send(FetchText(path: "later"), queue: "partner") }
            #expect(await eventually(within: 10) { await queues.status(of: "partner").waiting == 1 })
            #expect(server.requests.map(\.path) == ["/stream"])
            gate.open()
            var body = Data()
            for try await chunk in response.value { body.append(chunk) }
            #expect(String(decoding: body, as: UTF8.self) == "head-tail")
            #expect(try await later.value == "/later")
            #expect(server.requests.map(\.path) == ["/stream", "/later"])
            #expect(await eventually { await queues.status(of: "partner") == (running: 0, waiting: 0, isHeld: false) })
        }
    }

    /// Throws a failure that still hands the (streamed) `503` to the caller, as `CurlewOpenAPI`
    /// forwards a status its middleware acted on.
    struct Forwarding: APIMiddleware {
        struct Carried: ResponseCarryingError {
            let response: RawResponse
        }

        /// Innermost, where the status is still a response (the endpoint's checks come after).
        var phase: MiddlewarePhase? { MiddlewarePhase(rank: 1_000, name: "forwarding") }

        func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
            var context = context
            context.handledStatuses.insert(503)
            let raw = try await next(request, context)
            guard raw.status.code == 503 else { return raw }
            throw CurlewError(code: .unacceptableStatus, message: "forwarded", request: request.summary, underlying: Carried(response: raw))
        }
    }

    /// A failure that hands its streamed body on keeps the call's slot until that body ends, as
    /// a returned stream does: the next call of a serial queue waits for it.
    @Test func aFailureThatHandsOnItsStreamedBodyKeepsTheSlotForIt() async throws {
        let gate = Gate()
        try await withLoopback(handler: { request in
            guard request.path == "/busy" else { return .text(request.path) }
            return .stream(status: 503, headers: []) { writer in
                try await writer.write("head-")
                while !gate.isOpen { try await Task.sleep(for: .milliseconds(5)) }
                try await writer.write("tail")
            }
        }) { server, _, transport in
            let queues = QueueActor(limits: ["partner": 1])
            let client = APIClient(
                configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [Forwarding()]), transport: transport, queues: queues)
            var carried: RawResponse?
            do {
                _ = try await client.stream(FetchText(path: "busy")) { $0.queue = "partner" }
                Issue.record("the 503 was forwarded as a failure")
            } catch let error as CurlewError {
                carried = (error.underlying as? Forwarding.Carried)?.response
            }
            let body = try #require(carried)
            #expect(await queues.status(of: "partner").running == 1, "the forwarded body is still arriving")
            let later = Task { try await client.send(FetchText(path: "later"), queue: "partner") }
            #expect(await eventually(within: 10) { await queues.status(of: "partner").waiting == 1 })
            gate.open()
            guard case .stream(let stream) = body.content else {
                Issue.record("expected a streamed body")
                return
            }
            #expect(String(decoding: try await stream.collect(upTo: 1 << 10), as: UTF8.self) == "head-tail")
            #expect(try await later.value == "/later")
            #expect(server.requests.map(\.path) == ["/busy", "/later"])
        }
    }

    /// A streamed call's tracker ticket goes back when its body has arrived, as its queue slot
    /// does: `waitUntilFinished()` does not return while the body is still coming.
    @Test func aStreamsTicketIsHandedBackWhenItsBodyHasArrived() async throws {
        let gate = Gate()
        try await withLoopback(handler: handler(gate)) { server, _, transport in
            let queues = QueueActor(limits: ["partner": 1])
            let client = client(server, transport, queues)
            let tracker = RequestTracker()
            let ticket = tracker.ticket()
            let response = try await client.stream(FetchText(path: "stream")) {
                $0.queue = "partner"
                $0.ticket = ticket
            }
            #expect(tracker.outstanding == 1, "the body is still arriving")
            gate.open()
            _ = try await response.value.collect(upTo: 1 << 10)
            #expect(await eventually { tracker.outstanding == 0 })
            // A stream that fails before its head hands its ticket back at once.
            let failing = tracker.ticket()
            _ = await #expect(throws: CurlewError.self) {
                try await client.stream(FetchText(path: "stream")) {
                    $0.ticket = failing
                    $0.baseURL = "http://127.0.0.1:1"
                }
            }
            #expect(tracker.outstanding == 0)
        }
    }

    @Test func droppingAStreamGivesItsSlotBack() async throws {
        let gate = Gate()
        try await withLoopback(handler: handler(gate)) { server, _, transport in
            let queues = QueueActor(limits: ["partner": 1])
            let client = client(server, transport, queues)
            do {
                let response = try await client.stream(FetchText(path: "stream")) { $0.queue = "partner" }
                var iterator = response.value.makeAsyncIterator()
                #expect(try await iterator.next().map { String(decoding: $0, as: UTF8.self) } == "head-")
                #expect(await queues.status(of: "partner").running == 1)
            }
            // The stream is gone unread: the transfer stops and the slot is free again.
            #expect(try await client.send(FetchText(path: "after"), queue: "partner") == "/after")
            #expect(await eventually { await queues.status(of: "partner").running == 0 })
            gate.open()
        }
    }

    @Test func aFailedStreamedCallGivesItsSlotBackAtOnce() async throws {
        try await withLoopback(handler: { _ in .text("no", status: 503) }) { server, _, transport in
            let queues = QueueActor(limits: ["partner": 1])
            let client = client(server, transport, queues)
            let error = await #expect(throws: CurlewError.self) {
                _ = try await client.stream(FetchText(path: "stream")) { $0.queue = "partner" }
            }
            #expect(error?.status?.code == 503)
            #expect(await queues.status(of: "partner").running == 0)
        }
    }
}
