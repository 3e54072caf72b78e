@testable import Curlew
@testable import CurlewCore
import Foundation
import LoopbackServer
import Testing
import TestSupport

/// `DownloadOptions.maximumFileSize` caps the file a download writes: an announced length over
/// it fails at the head, a body that grows past it (no length, or a small compressed answer that
/// inflates) fails when it does; nothing is left on disk, a resumable partial file included.
@Suite("Download size limit", .timeLimit(.minutes(1)))
struct DownloadSizeLimitTests {
    private func limited(_ bytes: Int64, resumable: Bool = false) -> DownloadOptions {
        var options = DownloadOptions(resumable: resumable)
        options.maximumFileSize = bytes
        return options
    }

    @Test(arguments: [false, true])
    func anAnnouncedLengthOverTheLimitFailsAndLeavesNothing(resumable: Bool) async throws {
        let folder = try temporaryDirectory("size-limit-announced")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withLoopback(router: FileTransferRoutes.router()) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) {
                try await client.download(
                    FileGet(path: "/file?n=5000&etag=%22v1%22"), to: folder.appendingPathComponent("x.bin"),
                    options: limited(4999, resumable: resumable))
            }
            #expect(error?.code == .bodyTooLarge)
            #expect(server.requestCount == 1)
            #expect(contents(of: folder).isEmpty)
        }
    }

    @Test func aFileExactlyAtTheLimitIsWritten() async throws {
        let folder = try temporaryDirectory("size-limit-exact")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withLoopback(router: FileTransferRoutes.router()) { _, client, _ in
            let file = try await client.download(FileGet(path: "/file?n=5000"), to: folder.appendingPathComponent("x.bin"), options: limited(5000))
            #expect(try Data(contentsOf: file.url).count == 5000)
        }
    }

    /// No `Content-Length`: the limit is met while the body arrives.
    @Test(arguments: [false, true])
    func aBodyWithoutALengthThatGrowsPastTheLimitFails(resumable: Bool) async throws {
        let folder = try temporaryDirectory("size-limit-stream")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withLoopback(handler: { _ in
            .stream(headers: [("Content-Type", "application/octet-stream"), ("ETag", "\"v1\"")]) { writer in
                for _ in 0..<64 { try await writer.write([UInt8](repeating: 7, count: 16 * 1024)) }
            }
        }) { _, client, _ in
            let error = await #expect(throws: CurlewError.self) {
                try await client.download(
                    FileGet(path: "/endless"), to: folder.appendingPathComponent("x.bin"), options: limited(100_000, resumable: resumable))
            }
            #expect(error?.code == .bodyTooLarge)
            #expect(contents(of: folder).isEmpty)
        }
    }

    /// 1 MiB of zeros compresses to about 1 KiB; the file is counted in decoded bytes.
    @Test func aCompressedAnswerThatInflatesPastTheLimitFails() async throws {
        let folder = try temporaryDirectory("size-limit-gzip")
        defer { try? FileManager.default.removeItem(at: folder) }
        let encoded = compressed(Data(count: 1 << 20), .gzip)
        try await withLoopback(handler: { _ in
            ServerResponse(
                status: 200, headers: [("Content-Type", "application/octet-stream"), ("Content-Encoding", "gzip")], body: Array(encoded))
        }) { _, client, _ in
            let error = await #expect(throws: CurlewError.self) {
                try await client.download(FileGet(path: "/bomb"), to: folder.appendingPathComponent("x.bin"), options: limited(64 * 1024))
            }
            #expect(error?.code == .bodyTooLarge)
            #expect(contents(of: folder).isEmpty)
        }
    }
}
