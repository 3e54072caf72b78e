@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

/// Progress of a resumed download counts what ends up on disk, also when the answer is the whole
/// file again, a `416`, or the download starts over.
@Suite("Progress of resumed downloads", .serialized, .timeLimit(.minutes(2)))
struct ResumedProgressTests {
    let resumable = DownloadOptions(resumable: true)

    /// A resumed download that the server answers whole (`200`: the file changed) counts the new
    /// body only: no value above its total, and the last one is the file on disk.
    @Test func aResumeAnsweredWholeReportsTheNewBodyNotTheOldBytesPlusIt() async throws {
        let folder = try temporaryDirectory("audit-progress-200")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = VersionedFile()
        file.update { $0.length = 4 * 1024 * 1024 }
        try await file.interrupted(into: folder) { _, client, target in
            file.update { $0.version = 2 }
            let monitor = TransferProgressMonitor(interval: .zero)
            async let landed = client.download(FileGet(path: "/versioned"), to: target, options: resumable) {
                $0.reportProgress(to: monitor)
            }
            var values: [TransferProgress] = []
            for await value in monitor { values.append(value) }
            let downloaded = try await landed
            #expect(downloaded.status == .ok)
            let onDisk = Int64(try Data(contentsOf: target).count)
            #expect(onDisk == 4 * 1024 * 1024)
            #expect(values.last == TransferProgress(bytesReceived: onDisk, totalBytesToReceive: onDisk))
            let over = values.filter { value in value.totalBytesToReceive.map { value.bytesReceived > $0 || $0 > onDisk } ?? false }
            #expect(over.isEmpty, "values beyond the file: \(over.prefix(3))")
        }
    }

    /// A resumed download that starts over (a `206` of another version) keeps reporting to the
    /// same monitor through the restart and ends with the file's total.
    @Test func aDownloadThatStartsOverReportsUntilTheFileLands() async throws {
        let folder = try temporaryDirectory("audit-progress-restart")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = VersionedFile()
        try await file.interrupted(into: folder) { server, client, target in
            file.update {
                $0.version = 2
                $0.ignoresIfRange = true
            }
            let monitor = TransferProgressMonitor(interval: .zero)
            async let landed = client.download(FileGet(path: "/versioned"), to: target, options: resumable) {
                $0.reportProgress(to: monitor)
            }
            var values: [TransferProgress] = []
            for await value in monitor { values.append(value) }
            let downloaded = try await landed
            let length = Int64(file.behaviour.withLock { $0.length })
            #expect(downloaded.length == length)
            #expect(server.requestCount == 3)
            #expect(values.last == TransferProgress(bytesReceived: length, totalBytesToReceive: length))
        }
    }

    /// A resumed exchange whose `206` is refused (another version) shows nothing of the bytes it
    /// would have continued, so the restart is followed from its first values: the restarted
    /// transfer, held after 64 KiB — less than the 100 KiB the partial file had — is drawn at
    /// 64 KiB of the file's length, never held at the old offset until it passes it.
    @Test func aRestartIsFollowedFromItsFirstValues() async throws {
        let folder = try temporaryDirectory("audit-progress-restart-follow")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = VersionedFile()
        let held = 64 * 1024
        try await file.interrupted(into: folder) { server, client, target in
            file.update {
                $0.version = 2
                $0.ignoresIfRange = true
                $0.holdsAfter = held
            }
            let length = Int64(file.behaviour.withLock { $0.length })
            let events = client.events
            // The engine's own report of the restarted transfer at 64 KiB lets the rest go.
            let releaser = Task {
                for await event in events where event.kind == .progress {
                    if event.progress?.bytesReceived == Int64(held), event.progress?.totalBytesToReceive == length { break }
                }
                file.release.open()
            }
            let monitor = TransferProgressMonitor(interval: .zero)
            let hud = RecordingProgressAccessory()
            let downloaded = try await client.download(FileGet(path: "/versioned"), to: target, options: resumable) {
                $0.reportProgress(to: monitor)
                $0.accessories = [hud]
            }
            await releaser.value
            #expect(downloaded.length == length)
            #expect(downloaded.resumedBytes == 0)
            #expect(server.requestCount == 3)
            let values = hud.progress
            #expect(values.contains(TransferProgress(bytesReceived: Int64(held), totalBytesToReceive: length)), "\(values.map(\.bytesReceived))")
            #expect(values.first.map { $0.bytesReceived <= Int64(held) } == true, "\(values.map(\.bytesReceived))")
            #expect(zip(values, values.dropFirst()).allSatisfy { $0.bytesReceived <= $1.bytesReceived }, "never back: \(values.map(\.bytesReceived))")
            #expect(values.last == TransferProgress(bytesReceived: length, totalBytesToReceive: length))
        }
    }

    /// A `416` that says the partial file is whole ends the monitor at the file's total; a `416`
    /// that restarts keeps it going until the file lands.
    @Test func aFourSixteenEndsProgressAtTheFilesTotal() async throws {
        let folder = try temporaryDirectory("audit-progress-416")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = VersionedFile()
        try await file.interrupted(into: folder) { server, client, target in
            let length = file.behaviour.withLock { $0.length }
            let partial = try #require(contents(of: folder).first { $0.hasSuffix(".curlew-partial") })
            try Data(VersionedFile.bytes(version: 1, length: length)).write(to: folder.appendingPathComponent(partial))
            let monitor = TransferProgressMonitor(interval: .zero)
            async let landed = client.download(FileGet(path: "/versioned"), to: target, options: resumable) {
                $0.reportProgress(to: monitor)
            }
            var values: [TransferProgress] = []
            for await value in monitor { values.append(value) }
            let downloaded = try await landed
            #expect(downloaded.status == .rangeNotSatisfiable)
            #expect(server.requestCount == 2)
            #expect(values.last == TransferProgress(bytesReceived: Int64(length), totalBytesToReceive: Int64(length)))
        }
        let other = try temporaryDirectory("audit-progress-416b")
        defer { try? FileManager.default.removeItem(at: other) }
        try await file.interrupted(into: other) { server, client, target in
            let length = file.behaviour.withLock { $0.length }
            let partial = try #require(contents(of: other).first { $0.hasSuffix(".curlew-partial") })
            try Data(VersionedFile.bytes(version: 1, length: length + 10)).write(to: other.appendingPathComponent(partial))
            let monitor = TransferProgressMonitor(interval: .zero)
            async let landed = client.download(FileGet(path: "/versioned"), to: target, options: resumable) {
                $0.reportProgress(to: monitor)
            }
            var values: [TransferProgress] = []
            for await value in monitor { values.append(value) }
            let downloaded = try await landed
            #expect(downloaded.status == .ok)
            #expect(server.requestCount == 3)
            #expect(values.last == TransferProgress(bytesReceived: Int64(length), totalBytesToReceive: Int64(length)))
        }
    }

    /// An accessory sees a download that starts over as one activity that succeeds, drawn with
    /// values that never go back and end at the file's length.
    @Test func anAccessoryDrawsADownloadThatStartsOverAsOneSuccessfulActivity() async throws {
        let folder = try temporaryDirectory("audit-accessory-restart")
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = VersionedFile()
        try await file.interrupted(into: folder) { server, client, target in
            file.update {
                $0.version = 2
                $0.ignoresIfRange = true
            }
            let hud = RecordingProgressAccessory()
            let downloaded = try await client.download(FileGet(path: "/versioned"), to: target, options: resumable) {
                $0.accessories = [hud]
            }
            let length = Int64(file.behaviour.withLock { $0.length })
            #expect(downloaded.length == length)
            #expect(server.requestCount == 3)
            let calls = hud.calls
            #expect(calls.filter { $0 == .willStart }.count == 1)
            #expect(calls.first == .willStart)
            #expect(Array(calls.suffix(2)) == [.willStop(success: true), .didStop])
            let values = hud.progress
            #expect(zip(values, values.dropFirst()).allSatisfy { $0.bytesReceived <= $1.bytesReceived }, "never back: \(values.map(\.bytesReceived))")
            #expect(values.last == TransferProgress(bytesReceived: length, totalBytesToReceive: length))
        }
    }
}
