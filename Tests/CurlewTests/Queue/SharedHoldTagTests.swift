import Curlew
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// Two calls holding under one tag: the hold lasts until the last of them ends.
@Suite("A hold shared by two holding calls", .timeLimit(.minutes(1)))
struct SharedHoldTagTests {
    /// `/a` and `/b` each wait for their own gate; every other path answers at once.
    final class Gates: Sendable {
        private let open = Mutex<Set<String>>([])
        func open(_ path: String) { _ = open.withLock { $0.insert(path) } }
        func handle(_ request: ServerRequest) async -> ServerResponse {
            guard request.path == "/a" || request.path == "/b" else { return .text(request.path) }
            while !open.withLock({ $0.contains(request.path) }), !request.connection.isClosed { try? await Task.sleep(for: .milliseconds(5)) }
            return request.path == "/a" ? .text("a failed", status: 500) : .text(request.path)
        }
    }

    @Test(arguments: [RequestHold.Release.whenFinished, .onSuccess])
    func theHoldEndsWithTheLastHolder(release: RequestHold.Release) async throws {
        let gates = Gates()
        try await withLoopback(handler: { await gates.handle($0) }) { server, _, transport in
            let holds = RequestHolds()
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [holds]), transport: transport)
            let first = Task { try await client.send(Send(path: "a")) { $0.holdsLaterRequests = RequestHold(tag: "login", release: release) } }
            await waitForRequests(server, count: 1)
            let second = Task {
                try await client.send(Send(path: "b")) {
                    $0.holdsLaterRequests = RequestHold(tag: "login", release: release)
                    $0.ignoresHolds = true
                }
            }
            await waitForRequests(server, count: 2)
            let held = Task { try await client.send(Send(path: "c")) }
            #expect(await eventually { holds.heldCount("login") == 1 })
            // The first holder ends (it fails); the second still holds.
            gates.open("/a")
            _ = await first.result
            try await Task.sleep(for: .milliseconds(50))
            #expect(server.requestCount == 2, "the held call waits for the second holder")
            #expect(holds.heldCount("login") == 1)
            // The second ends with success: the held call goes out (one holder succeeded).
            gates.open("/b")
            let answers = [try await second.value, try await held.value]
            #expect(answers == ["/b", "/c"])
            #expect(holds.activeTags.isEmpty)
        }
    }
}
