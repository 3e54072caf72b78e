@testable import Curlew
@testable import CurlewCore
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// An accessory that records every callback in order.
final class RecordingProgressAccessory: Accessory {
    enum Call: Equatable {
        case willStart
        case progress(TransferProgress)
        case willStop(success: Bool)
        case didStop
    }

    /// Guards the recorded calls.
    private let recorded = Mutex<[Call]>([])

    var calls: [Call] { recorded.withLock { $0 } }
    var progress: [TransferProgress] {
        calls.compactMap { if case .progress(let update) = $0 { update } else { nil } }
    }

    func willStart(_ activity: Activity) { recorded.withLock { $0.append(.willStart) } }
    func didProgress(_ activity: Activity, progress: TransferProgress) { recorded.withLock { $0.append(.progress(progress)) } }
    func willStop(_ activity: Activity, outcome: Result<Void, any Error>) {
        let success = if case .success = outcome { true } else { false }
        recorded.withLock { $0.append(.willStop(success: success)) }
    }
    func didStop(_ activity: Activity, outcome: Result<Void, any Error>, duration: Duration) { recorded.withLock { $0.append(.didStop) } }
}

@Suite("Accessories draw transfer progress", .serialized, .timeLimit(.minutes(2)))
struct AccessoryProgressTests {
    /// The monitor's throttle: at most one value per 1/60 s besides the final one.
    static func throttleBound(_ elapsed: Duration) -> Int {
        Int(elapsed / .microseconds(16_667)) + 1
    }

    @Test func aDownloadIsDrawnWithMonotonicThrottledValuesEndingAtTheTotal() async throws {
        let folder = try temporaryDirectory("accessory-down")
        defer { try? FileManager.default.removeItem(at: folder) }
        let length = 16 * 1024 * 1024
        try await withLoopback(router: FileTransferRoutes.router()) { _, client, _ in
            let hud = RecordingProgressAccessory()
            let started = ContinuousClock.now
            let file = try await client.download(FileGet(path: "/file?n=\(length)"), to: folder.appendingPathComponent("d.bin")) {
                $0.accessories = [hud]
            }
            let elapsed = ContinuousClock.now - started
            #expect(file.length == Int64(length))
            let values = hud.progress
            #expect(values.count >= 2, "\(values.count) values")
            #expect(zip(values, values.dropFirst()).allSatisfy { $0.bytesReceived < $1.bytesReceived }, "strictly monotonic")
            #expect(values.allSatisfy { $0.bytesSent == 0 && $0.totalBytesToSend == nil }, "nothing sent")
            #expect(values.last == TransferProgress(bytesReceived: Int64(length), totalBytesToReceive: Int64(length)))
            #expect(values.count <= Self.throttleBound(elapsed) + 1, "\(values.count) values in \(elapsed)")
            // Between willStart and willStop, nothing after.
            let calls = hud.calls
            #expect(calls.first == .willStart)
            #expect(Array(calls.suffix(2)) == [.willStop(success: true), .didStop])
            #expect(calls.count == values.count + 3)
        }
    }

    @Test func anUploadIsDrawnUpToTheWholeRequestBody() async throws {
        let folder = try temporaryDirectory("accessory-up")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("u.bin").path
        let length = 8 * 1024 * 1024 + 5
        try writePatternFile(path, length: length)
        var building = MultipartForm()
        building.append(fileAt: path)
        let form = building
        try await withLoopback(router: FileTransferRoutes.router()) { _, client, _ in
            let hud = RecordingProgressAccessory()
            let started = ContinuousClock.now
            let text = try await client.send(FormPost(path: "/multipart", form: form)) { $0.accessories = [hud] }
            let elapsed = ContinuousClock.now - started
            #expect(text.hasPrefix("file|u.bin|application/octet-stream|\(length)|"))
            let values = hud.progress
            let total = try #require(values.last?.totalBytesToSend)
            #expect(total > Int64(length), "the whole multipart body")
            let answer = Int64(text.utf8.count)
            #expect(values.last == TransferProgress(bytesSent: total, totalBytesToSend: total, bytesReceived: answer, totalBytesToReceive: answer))
            #expect(values.allSatisfy { $0.totalBytesToSend == total }, "the body's size is known from the start")
            #expect(zip(values, values.dropFirst()).allSatisfy { $0.bytesSent <= $1.bytesSent && $0.bytesReceived <= $1.bytesReceived }, "monotonic")
            #expect(zip(values, values.dropFirst()).allSatisfy { $0 != $1 }, "no repeats")
            #expect(values.count <= Self.throttleBound(elapsed) + 1, "\(values.count) values in \(elapsed)")
            #expect(Array(hud.calls.suffix(2)) == [.willStop(success: true), .didStop])
        }
    }

    @Test func aClientWideAccessorySharesTheValuesOfTheCallsMonitor() async throws {
        let folder = try temporaryDirectory("accessory-shared")
        defer { try? FileManager.default.removeItem(at: folder) }
        let length = 8 * 1024 * 1024
        try await withLoopback(router: FileTransferRoutes.router()) { server, _, transport in
            let hud = RecordingProgressAccessory()
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, accessories: [hud]), transport: transport)
            let monitor = TransferProgressMonitor()
            async let file = client.download(FileGet(path: "/file?n=\(length)"), to: folder.appendingPathComponent("s.bin")) {
                $0.reportProgress(to: monitor)
            }
            var sequence: [TransferProgress] = []
            for await update in monitor { sequence.append(update) }
            let downloaded = try await file
            #expect(downloaded.length == Int64(length))
            let drawn = hud.progress
            // The sequence may skip a value its reader was too slow for; it never has one the accessory lacks.
            var remaining = drawn[...]
            for value in sequence {
                guard let index = remaining.firstIndex(of: value) else {
                    Issue.record("\(value) was not drawn")
                    break
                }
                remaining = remaining[(index + 1)...]
            }
            #expect(sequence.last == drawn.last)
            #expect(drawn.last?.bytesReceived == Int64(length))
        }
    }

    /// A call that reports to two monitors draws each value once: only the outermost reporter
    /// tells the accessories (each monitor delivers its final value, so a second teller would
    /// draw the total twice).
    @Test func aCallReportingToTwoMonitorsDrawsEachValueOnce() async throws {
        let folder = try temporaryDirectory("accessory-two")
        defer { try? FileManager.default.removeItem(at: folder) }
        let length = 1024 * 1024
        try await withLoopback(router: FileTransferRoutes.router()) { _, client, _ in
            let hud = RecordingProgressAccessory()
            let first = TransferProgressMonitor()
            let second = TransferProgressMonitor()
            let file = try await client.download(FileGet(path: "/file?n=\(length)"), to: folder.appendingPathComponent("t.bin")) {
                $0.reportProgress(to: first)
                $0.reportProgress(to: second)
                $0.accessories = [hud]
            }
            #expect(file.length == Int64(length))
            let drawn = hud.progress
            #expect(zip(drawn, drawn.dropFirst()).allSatisfy { $0.bytesReceived < $1.bytesReceived }, "\(drawn)")
            #expect(drawn.last == TransferProgress(bytesReceived: Int64(length), totalBytesToReceive: Int64(length)))
            var fromFirst: [TransferProgress] = []
            for await update in first { fromFirst.append(update) }
            var fromSecond: [TransferProgress] = []
            for await update in second { fromSecond.append(update) }
            #expect(fromFirst.last == drawn.last)
            #expect(fromSecond.last == drawn.last)
        }
    }

    @Test func aRequestWithoutABodyToMoveDrawsNothingAndAFailedDownloadHasNoFinalValue() async throws {
        let folder = try temporaryDirectory("accessory-none")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withLoopback(router: FileTransferRoutes.router()) { _, client, _ in
            let quiet = RecordingProgressAccessory()
            let data = try await client.send(FileGet(path: "/file?n=1000")) { $0.accessories = [quiet] }
            #expect(data.count == 1000)
            #expect(quiet.calls == [.willStart, .willStop(success: true), .didStop])

            let failing = RecordingProgressAccessory()
            await #expect(throws: CurlewError.self) {
                _ = try await client.download(FileGet(path: "/status/500"), to: folder.appendingPathComponent("f.bin")) {
                    $0.accessories = [failing]
                }
            }
            #expect(failing.progress.allSatisfy { $0.bytesReceived < 100 })
            #expect(failing.calls.first == .willStart)
            #expect(Array(failing.calls.suffix(2)) == [.willStop(success: false), .didStop])
            #expect(contents(of: folder).isEmpty)
        }
    }

    @Test func theDownloadsOfABatchReportAsOneUnitWithoutProgress() async throws {
        let folder = try temporaryDirectory("accessory-batch")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withLoopback(router: FileTransferRoutes.router()) { server, _, transport in
            let hud = RecordingProgressAccessory()
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, accessories: [hud]), transport: transport)
            let results = await client.batch(
                operations: (0..<2).map { index in
                    { @Sendable client in try await client.download(FileGet(path: "/file?n=\(1 << 20)"), to: folder.appendingPathComponent("b\(index).bin")).length }
                })
            #expect(results.compactMap { try? $0.get() } == [1 << 20, 1 << 20])
            #expect(hud.calls == [.willStart, .willStop(success: true), .didStop])
        }
    }
}
