import Curlew
import Foundation
import LoopbackServer
import Testing
import TestSupport

/// Stall-detector settings a download cannot honour are refused before anything is sent: a
/// `minimumSpeed` of 0 became 1 byte a second, and a `stallTimeout` of zero was refused under
/// another name (`idleTimeout`).
@Suite("Download options out of range", .timeLimit(.minutes(1)))
struct DownloadOptionsRefusalTests {
    static let refused: [(String, @Sendable (inout DownloadOptions) -> Void)] = [
        ("DownloadOptions.minimumSpeed must be at least 1 byte a second, not 0", { $0.minimumSpeed = 0 }),
        ("DownloadOptions.minimumSpeed must be at least 1 byte a second, not -1024", { $0.minimumSpeed = -1024 }),
        ("DownloadOptions.maximumFileSize must be zero or more bytes (nil means no limit), not -1", { $0.maximumFileSize = -1 }),
        ("DownloadOptions.stallTimeout must be longer than zero (nil turns the stall detector off), not 0.0 seconds", { $0.stallTimeout = .zero }),
        ("DownloadOptions.stallTimeout must be longer than zero (nil turns the stall detector off), not -2.0 seconds", { $0.stallTimeout = .seconds(-2) }),
        (
            "DownloadOptions.stallTimeout must be at most 365 days (nil turns the stall detector off), not 9.223372036854776e+18 seconds",
            { $0.stallTimeout = .seconds(Int64.max) + .milliseconds(1) }
        ),
    ]

    @Test(arguments: 0..<refused.count)
    func aDownloadWithAStallSettingOutOfRangeFailsUnsent(case index: Int) async throws {
        let (message, change) = Self.refused[index]
        let folder = try temporaryDirectory("refused-download-\(index)")
        defer { try? FileManager.default.removeItem(at: folder) }
        var options = DownloadOptions()
        change(&options)
        try await withLoopback(router: FileTransferRoutes.router()) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) {
                try await client.download(FileGet(path: "/file?n=100"), to: folder.appendingPathComponent("x.bin"), options: options)
            }
            #expect(error?.code == .invalidConnectionSettings)
            #expect(error?.stage == .configuration)
            #expect(error?.message == "\(message); nothing was sent")
            #expect(server.requestCount == 0)
            let left = try FileManager.default.contentsOfDirectory(atPath: folder.path)
            #expect(left.isEmpty, "no file, partial file or record is left")
        }
    }

    @Test func theSmallestSettingsAndNoDetectorAreAccepted() async throws {
        let folder = try temporaryDirectory("accepted-download")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withLoopback(router: FileTransferRoutes.router()) { server, client, _ in
            var smallest = DownloadOptions()
            smallest.minimumSpeed = 1
            smallest.stallTimeout = .milliseconds(500)
            let first = try await client.download(FileGet(path: "/file?n=100"), to: folder.appendingPathComponent("a.bin"), options: smallest)
            var none = DownloadOptions()
            none.stallTimeout = nil
            let second = try await client.download(FileGet(path: "/file?n=100"), to: folder.appendingPathComponent("b.bin"), options: none)
            #expect(try Data(contentsOf: first.url).count == 100)
            #expect(try Data(contentsOf: second.url).count == 100)
            #expect(server.requestCount == 2)
        }
    }

    /// An area whose files would be swept as soon as they are finished is refused too.
    @Test func aDownloadIntoAnAreaWithoutLifetimeFailsUnsent() async throws {
        let folder = try temporaryDirectory("refused-area")
        defer { try? FileManager.default.removeItem(at: folder) }
        var options = DownloadOptions()
        options.area = DownloadArea(directory: folder.appendingPathComponent("area", isDirectory: true), lifetime: .zero)
        try await withLoopback(router: FileTransferRoutes.router()) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.download(FileGet(path: "/file?n=100"), options: options) }
            #expect(error?.code == .invalidConnectionSettings)
            #expect(error?.message == "DownloadArea.lifetime must be longer than zero, not 0.0 seconds; nothing was sent")
            #expect(server.requestCount == 0)
        }
    }
}
