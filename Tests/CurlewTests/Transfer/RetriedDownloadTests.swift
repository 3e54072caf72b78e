@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

/// A download retried by ``RetryMiddleware`` after a `503`: the retry writes the same partial
/// file, resumable or not, and the file lands once.
@Suite("Retried downloads", .serialized, .timeLimit(.minutes(1)))
struct RetriedDownloadTests {
    @Test(arguments: [false, true])
    func aDownloadRetriedAfterA503LandsTheFile(resumable: Bool) async throws {
        let folder = try temporaryDirectory("retried-download")
        defer { try? FileManager.default.removeItem(at: folder) }
        let length = 200 * 1024 + 1
        let hits = ByteCounter()
        var router = LoopbackRouter()
        router.on("GET", "/flaky-file") { _, _ in
            hits.add(1)
            if hits.value == 1 { return .text("busy", status: 503) }
            return ServerResponse(
                status: 200, headers: [("Content-Type", "application/octet-stream"), ("ETag", "\"e1\"")], body: PatternBody.bytes(length))
        }
        try await withLoopback(router: router) { server, client, _ in
            let retry = RetryMiddleware(maximumAttempts: 2, baseDelay: .milliseconds(10))
            let target = folder.appendingPathComponent("f.bin")
            let file = try await client.download(FileGet(path: "/flaky-file"), to: target, options: DownloadOptions(resumable: resumable)) {
                $0.middleware.append(retry)
            }
            #expect(file.status == .ok)
            #expect(file.length == Int64(length))
            #expect(try sha256(ofFile: target.path) == sha256(ofPattern: length))
            #expect(server.requestCount == 2)
            #expect(contents(of: folder) == ["f.bin"])
        }
    }
}

/// An error answer to a download that had nothing on disk leaves nothing at the destination,
/// resumable or not: no empty partial file.
@Suite("Error answers leave nothing", .serialized, .timeLimit(.minutes(1)))
struct ErrorAnswerLeavesNothingTests {
    @Test(arguments: [false, true])
    func aFirstAnswerOf404LeavesAnEmptyFolder(resumable: Bool) async throws {
        let folder = try temporaryDirectory("download-404")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withLoopback(router: FileTransferRoutes.router()) { _, client, _ in
            let error = await #expect(throws: CurlewError.self) {
                try await client.download(FileGet(path: "/status/404"), to: folder.appendingPathComponent("f.bin"), options: DownloadOptions(resumable: resumable))
            }
            #expect(error?.code == .unacceptableStatus)
            #expect(error?.status == .notFound)
            #expect(contents(of: folder) == [])
        }
    }

    /// A folder where no file can be created (`/proc`, even for root) fails with
    /// `.fileNotWritable` before anything is sent.
    @Test func aFolderThatRefusesFilesFailsBeforeAnythingIsSent() async throws {
        try await withLoopback(router: FileTransferRoutes.router()) { server, client, _ in
            for resumable in [false, true] {
                let error = await #expect(throws: CurlewError.self) {
                    try await client.download(
                        FileGet(path: "/file?n=10"), to: URL(fileURLWithPath: "/proc/", isDirectory: true),
                        options: DownloadOptions(resumable: resumable))
                }
                #expect(error?.code == .fileNotWritable, "\(error?.message ?? "")")
            }
            #expect(server.requestCount == 0)
        }
    }
}
