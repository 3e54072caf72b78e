@testable import Curlew
@testable import CurlewCore
import Foundation
import LoopbackServer
import Testing
import TestSupport

/// Downloads have no total timeout by default; a stall detector ends a stalled or trickling one
/// with `.idleTimeout` in bounded time; a call may still set a total timeout.
@Suite("Download timeouts", .serialized, .timeLimit(.minutes(1)), .timingSensitive)
struct DownloadTimeoutTests {
    private func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    @Test func aServerThatSendsTheHeadAndThenNothingFailsWithIdleTimeoutInBoundedTime() async throws {
        let folder = try temporaryDirectory("stall-head")
        defer { try? FileManager.default.removeItem(at: folder) }
        var options = DownloadOptions()
        options.stallTimeout = .seconds(1)
        try await withLoopback(router: SlowRoutes.router()) { _, client, _ in
            let started = ContinuousClock.now
            let error = await #expect(throws: CurlewError.self) {
                try await client.download(FileGet(path: "/hold?after=0"), to: folder.appendingPathComponent("x.bin"), options: options)
            }
            let elapsed = seconds(ContinuousClock.now - started)
            #expect(error?.code == .idleTimeout, "\(String(describing: error))")
            #expect(error?.level == .transport)
            // The server holds until the client leaves, so only the stall detector can end the
            // download (a hang is the suite's time limit), and not before its window.
            #expect(elapsed >= 0.9, "failed after \(elapsed) s")
            #expect(contents(of: folder).isEmpty)
        }
    }

    @Test func aTricklingServerBelowTheMinimumSpeedFailsWithIdleTimeoutInBoundedTime() async throws {
        let folder = try temporaryDirectory("stall-trickle")
        defer { try? FileManager.default.removeItem(at: folder) }
        var options = DownloadOptions()
        options.stallTimeout = .seconds(1)
        options.minimumSpeed = 1000
        try await withLoopback(router: SlowRoutes.router()) { _, client, _ in
            let started = ContinuousClock.now
            // 10 bytes a second: bytes keep moving (no idle timeout), but far below 1000 B/s.
            let error = await #expect(throws: CurlewError.self) {
                try await client.download(FileGet(path: "/drip?n=100000&chunk=1&every=100"), to: folder.appendingPathComponent("x.bin"), options: options)
            }
            let elapsed = seconds(ContinuousClock.now - started)
            #expect(error?.code == .idleTimeout, "\(String(describing: error))")
            #expect(error?.message.hasPrefix("Operation too slow") == true, "\(error?.message ?? "")")
            // 10 000 s of drip: only the minimum-speed detector can end it, and not before its window.
            #expect(elapsed >= 0.9, "failed after \(elapsed) s")
            #expect(contents(of: folder).isEmpty)
        }
    }

    @Test func theClientsTotalTimeoutDoesNotApplyButTheCallsOwnDoes() async throws {
        let folder = try temporaryDirectory("stall-total")
        defer { try? FileManager.default.removeItem(at: folder) }
        var transfer = TransferOptions()
        transfer.totalTimeout = .milliseconds(300)
        // 16 chunks of 8 KiB every 60 ms: about 1 s, well above the minimum speed.
        let path = "/drip?n=\(16 * 8192)&chunk=8192&every=60"
        try await withLoopback(transferOptions: transfer, router: SlowRoutes.router()) { _, client, _ in
            let ordinary = await #expect(throws: CurlewError.self) { try await client.send(FileGet(path: path)) }
            #expect(ordinary?.code == .totalTimeout, "an ordinary request keeps the client's total timeout")

            let file = try await client.download(FileGet(path: path), to: folder.appendingPathComponent("slow.bin"))
            #expect(file.length == Int64(16 * 8192))

            let bounded = await #expect(throws: CurlewError.self) {
                try await client.download(FileGet(path: path), to: folder.appendingPathComponent("bounded.bin")) { $0.totalTimeout = .milliseconds(300) }
            }
            #expect(bounded?.code == .totalTimeout)
            #expect(contents(of: folder) == ["slow.bin"])
        }
    }

    @Test func stallWindowsRoundUpToWholeSeconds() {
        #expect(APIClient.wholeSeconds(.milliseconds(1)) == 1)
        #expect(APIClient.wholeSeconds(.seconds(30)) == 30)
        #expect(APIClient.wholeSeconds(.milliseconds(2500)) == 3)
    }
}
