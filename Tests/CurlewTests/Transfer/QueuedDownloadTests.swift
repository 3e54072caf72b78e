import Curlew
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// HAccess's image downloads: files through a named queue of two, and one notice when all of them
/// are done (`startWithQueueName:` with `initQueueWithName:maxConcurrent:` and `queue:finish:`).
@Suite("Downloads through a named queue", .timeLimit(.minutes(1)))
struct QueuedDownloadTests {
    /// What the server saw: requests in flight, the most at once, and whether it may answer.
    final class Served: Sendable {
        struct State {
            var inFlight = 0
            var peak = 0
            var open = false
        }
        let state = Mutex(State())
    }

    /// `GET /image?i=N`.
    struct Image: Endpoint {
        typealias Response = Data
        var index: Int
        var path: String { "image" }
        var query: [URLQueryItem] { [URLQueryItem(name: "i", value: String(index))] }
    }

    /// The bytes of image `index`: its own length and fill, so a mixed-up file shows.
    static func bytes(of index: Int) -> Data { Data(repeating: UInt8(index), count: 20_000 + index * 1_000) }

    @Test func theAllDoneNoticeComesWhenEveryFileIsInPlace() async throws {
        let folder = try temporaryDirectory("queued-downloads")
        defer { try? FileManager.default.removeItem(at: folder) }
        let served = Served()
        let server = try await LoopbackServer.start { request in
            served.state.withLock {
                $0.inFlight += 1
                $0.peak = max($0.peak, $0.inFlight)
            }
            // Held until the test opens the gate (polled: the handler runs on the server's loop).
            while !served.state.withLock({ $0.open }) { try? await Task.sleep(for: .milliseconds(5)) }
            served.state.withLock { $0.inFlight -= 1 }
            let index = Int(request.queryValue("i") ?? "") ?? 0
            return ServerResponse(status: 200, headers: [(name: "Content-Type", value: "image/png")], body: Array(Self.bytes(of: index)))
        }
        let transport = CurlTransport()
        let queues = QueueActor(limits: ["images": 2])
        let client = APIClient(baseURL: server.baseURL, transport: transport, queues: queues)

        let count = 5
        let tracker = RequestTracker()
        var downloads: [Task<DownloadedFile, any Error>] = []
        for index in 1...count {
            let ticket = tracker.ticket()  // taken before the call starts
            let target = folder.appendingPathComponent("image-\(index).png")
            downloads.append(
                Task {
                    try await client.download(Image(index: index), to: target) {
                        $0.queue = "images"; $0.ticket = ticket
                    }
                })
        }

        // Two run (both handlers hold their answer), three wait in the queue; nothing is done.
        #expect(await eventually { served.state.withLock { $0.inFlight } == 2 })
        #expect(server.requestCount == 2)
        // The other three tasks may still be on their way to the queue: wait until they wait.
        #expect(await eventually { await queues.status(of: "images").waiting == count - 2 })
        #expect(await queues.status(of: "images").running == 2)
        #expect(tracker.outstanding == count)
        for index in 1...count {
            #expect(!FileManager.default.fileExists(atPath: folder.appendingPathComponent("image-\(index).png").path))
        }

        served.state.withLock { $0.open = true }
        await tracker.waitUntilFinished()
        // All done means done: every file is in place, whole, when the notice comes.
        #expect(tracker.outstanding == 0)
        for index in 1...count {
            #expect(try Data(contentsOf: folder.appendingPathComponent("image-\(index).png")) == Self.bytes(of: index))
        }
        #expect(contents(of: folder).sorted() == (1...count).map { "image-\($0).png" })
        #expect(server.requestCount == count)
        #expect(served.state.withLock { $0.peak } == 2)
        for download in downloads {
            let file = try await download.value
            #expect(file.status == .ok)
            #expect(file.mimeType == "image/png")
        }
        await transport.shutdown()
        await server.shutdown()
    }
}
