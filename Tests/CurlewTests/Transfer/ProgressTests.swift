@testable import Curlew
@testable import CurlewCore
import Foundation
import LoopbackServer
import Testing
import TestSupport

@Suite("Transfer progress as an AsyncSequence", .serialized, .timeLimit(.minutes(2)))
struct ProgressTests {
    @Test func downloadProgressIsMonotonicThrottledAndEndsAtTheTotal() async throws {
        let folder = try temporaryDirectory("progress")
        defer { try? FileManager.default.removeItem(at: folder) }
        let length = 16 * 1024 * 1024
        try await withLoopback(router: FileTransferRoutes.router()) { _, client, _ in
            let monitor = TransferProgressMonitor()
            let events = client.events
            async let file = client.download(FileGet(path: "/file?n=\(length)"), to: folder.appendingPathComponent("p.bin")) {
                $0.reportProgress(to: monitor)
            }
            var values: [TransferProgress] = []
            let started = ContinuousClock.now
            for await update in monitor { values.append(update) }
            let elapsed = ContinuousClock.now - started
            let downloaded = try await file
            #expect(downloaded.length == Int64(length))
            #expect(values.count >= 2)
            #expect(values.map(\.bytesReceived) == values.map(\.bytesReceived).sorted(), "monotonic")
            #expect(Set(values.map(\.bytesReceived)).count == values.count, "no repeats")
            #expect(values.allSatisfy { $0.bytesSent == 0 && $0.totalBytesToSend == nil }, "nothing sent")
            #expect(values.last == TransferProgress(bytesReceived: Int64(length), totalBytesToReceive: Int64(length)))
            #expect(values.last?.fractionReceived == 1)
            // At most ~60 a second, plus the final value.
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            #expect(Double(values.count) <= seconds * 60 + 2, "\(values.count) values in \(elapsed)")
            // The same transfer is reported as events.
            var sawProgress = false
            for await event in events where event.kind == .progress {
                sawProgress = true
                break
            }
            #expect(sawProgress)
        }
    }

    /// libcurl calls the progress callback for every chunk (thousands for 32 MiB); the engine
    /// publishes at most ~60 events a second per transfer, plus the final counters.
    @Test func theEngineThrottlesProgressEventsAtTheSourceAndEndsWithTheTotal() async throws {
        let folder = try temporaryDirectory("progress-events")
        defer { try? FileManager.default.removeItem(at: folder) }
        let length = 32 * 1024 * 1024
        try await withLoopback(router: FileTransferRoutes.router()) { _, client, _ in
            let events = client.events
            let collector = Task {
                var received: [TransferProgress] = []
                for await event in events {
                    if event.kind == .progress, let progress = event.progress { received.append(progress) }
                    if event.kind == .finished || event.kind == .failed { break }
                }
                return received
            }
            let started = ContinuousClock.now
            let file = try await client.download(FileGet(path: "/file?n=\(length)"), to: folder.appendingPathComponent("e.bin"))
            let elapsed = ContinuousClock.now - started
            let received = await collector.value
            #expect(file.length == Int64(length))
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            // 60 a second, the first one with a total, and the final counters.
            #expect(Double(received.count) <= seconds * 60 + 3, "\(received.count) events in \(elapsed)")
            #expect(received.map(\.bytesReceived) == received.map(\.bytesReceived).sorted(), "monotonic")
            #expect(received.last?.bytesReceived == Int64(length))
            #expect(received.last?.totalBytesToReceive == Int64(length))
        }
    }

    @Test func uploadProgressCountsTheRequestBodyAndEndsAtItsLength() async throws {
        let folder = try temporaryDirectory("progress-up")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("u.bin").path
        let length = 8 * 1024 * 1024 + 3
        try writePatternFile(path, length: length)
        var building = MultipartForm()
        building.append(fileAt: path)
        let form = building
        try await withLoopback(router: FileTransferRoutes.router()) { _, client, _ in
            let monitor = TransferProgressMonitor()
            async let answer = client.send(FormPost(path: "/multipart", form: form)) { $0.reportProgress(to: monitor) }
            var values: [TransferProgress] = []
            for await update in monitor { values.append(update) }
            let text = try await answer
            #expect(text.hasPrefix("file|u.bin|application/octet-stream|\(length)|"))
            let total = try #require(values.last?.totalBytesToSend)
            #expect(total > Int64(length), "the whole multipart body")
            #expect(values.last?.bytesSent == total)
            #expect(values.last?.fractionSent == 1)
            #expect(values.last?.bytesReceived == Int64(text.utf8.count))
            #expect(values.map(\.bytesSent) == values.map(\.bytesSent).sorted())
            #expect(values.map(\.bytesReceived) == values.map(\.bytesReceived).sorted())
        }
    }

    @Test func aFailedCallEndsTheSequenceWithoutAFinalValue() async throws {
        try await withLoopback(router: FileTransferRoutes.router()) { _, client, _ in
            let monitor = TransferProgressMonitor()
            async let result: Data = client.send(FileGet(path: "/status/500")) { $0.reportProgress(to: monitor) }
            var values: [TransferProgress] = []
            for await update in monitor { values.append(update) }
            do {
                _ = try await result
                Issue.record("expected a failure")
            } catch {
                #expect((error as? CurlewError)?.status?.code == 500)
            }
            #expect(values.allSatisfy { $0.bytesReceived <= 10 })
        }
    }
}
