import Curlew
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// ``TransportService`` graceful shutdown with bodies still arriving: a streamed response the
/// caller is reading and a download keep the drain waiting until they end, within the grace
/// period; new requests fail at once; a body outliving the grace period fails with `.shutdown`.
@Suite("Transport service drains streamed bodies", .timeLimit(.minutes(2)))
struct StreamDrainTests {
    struct Feed: Endpoint {
        typealias Response = Data
        var path: String { "feed" }
    }

    /// Set when `shutdown()` has returned.
    final class Finished: Sendable {
        private let value = Mutex(false)
        func set() { value.withLock { $0 = true } }
        var isSet: Bool { value.withLock { $0 } }
    }

    /// One gated two-chunk body (`ObservabilityGate.gatedBody`) served on the loopback, a
    /// ``TransportService`` with `gracePeriod` and a client sending through it; the server shuts
    /// down after `body`.
    func withGatedFeed(
        gracePeriod: Duration,
        _ body: (ObservabilityGate, LoopbackServer, TransportService, APIClient) async throws -> Void
    ) async throws {
        let gate = ObservabilityGate()
        let server = try await LoopbackServer.start { gate.gatedBody($0) }
        let service = TransportService(gracePeriod: gracePeriod)
        try await body(gate, server, service, APIClient(baseURL: server.baseURL, transport: service))
        await server.shutdown()
    }

    /// Starts `shutdown()`, waits until the service is shutting down, and checks that a new
    /// request then fails at once with `.shutdown`. The task ends when `shutdown()` returns.
    func beginShutdown(of service: TransportService, client: APIClient) async throws -> (done: Task<Void, Never>, finished: Finished) {
        let finished = Finished()
        let done = Task {
            await service.shutdown()
            finished.set()
        }
        _ = await eventually { service.isShuttingDown }
        let refused = try await #require(throws: CurlewError.self) { try await client.send(Feed()) }
        #expect(refused.code == .shutdown)
        return (done, finished)
    }

    @Test func aStreamBeingReadDrainsBeforeShutdownCompletesAndNewRequestsFailAtOnce() async throws {
        try await withGatedFeed(gracePeriod: .seconds(30)) { gate, server, service, client in
            let response = try await client.stream(Feed())
            var iterator = response.value.makeAsyncIterator()
            var received = try #require(try await iterator.next())
            #expect(service.inFlight == 1, "the head has arrived, the body has not: still in flight")

            let shutdown = try await beginShutdown(of: service, client: client)
            #expect(server.requestCount == 1, "the refused request was never sent")
            #expect(service.inFlight == 1)
            #expect(!shutdown.finished.isSet, "shutdown waits for the body")

            gate.release()
            while let chunk = try await iterator.next() { received.append(chunk) }
            #expect(received == Data(repeating: UInt8(ascii: "a"), count: 1000) + Data(repeating: UInt8(ascii: "b"), count: 1000))
            await shutdown.done.value
            #expect(service.inFlight == 0)
        }
    }

    @Test func aStreamOutlivingTheGracePeriodFailsWithShutdown() async throws {
        try await withGatedFeed(gracePeriod: .milliseconds(200)) { gate, _, service, client in
            let response = try await client.stream(Feed())
            var iterator = response.value.makeAsyncIterator()
            #expect(try await iterator.next()?.count == 1000)
            await service.shutdown()
            let error = try await #require(throws: CurlewError.self) {
                while try await iterator.next() != nil {}
            }
            #expect(error.code == .shutdown)
            #expect(service.inFlight == 0)
            gate.release()
        }
    }

    @Test func aStreamItsReaderCancelsStopsCountingAsInFlight() async throws {
        try await withGatedFeed(gracePeriod: .seconds(30)) { gate, _, service, client in
            let response = try await client.stream(Feed())
            #expect(service.inFlight == 1)
            response.value.cancel()
            // Counted out when the engine has stopped the transfer (the end carries what libcurl
            // measured until then), a moment after the cancel.
            #expect(await eventually { service.inFlight == 0 })
            await service.shutdown()
            gate.release()
        }
    }

    @Test func aDownloadInFlightFinishesItsFileBeforeShutdownCompletes() async throws {
        try await withGatedFeed(gracePeriod: .seconds(30)) { gate, server, service, client in
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-drain-\(UUID().uuidString)/")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let download = Task { try await client.download(Feed(), to: folder.appendingPathComponent("feed.bin")) }
            await waitForRequests(server, count: 1)
            #expect(service.inFlight == 1)

            let shutdown = try await beginShutdown(of: service, client: client)
            #expect(!shutdown.finished.isSet, "shutdown waits for the download")

            gate.release()
            let file = try await download.value
            #expect(file.length == 2000)
            #expect(try Data(contentsOf: file.url).count == 2000)
            await shutdown.done.value
            #expect(service.inFlight == 0)
        }
    }
}
