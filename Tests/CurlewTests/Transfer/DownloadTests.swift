@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

/// `APIClient.download(_:to:options:adjust:)` against the loopback server.
@Suite("Downloads to disk", .serialized, .timeLimit(.minutes(2)))
struct DownloadTests {
    @Test func aDownloadToAFileURLHasTheExactBytesMode0600AndNothingElseInTheFolder() async throws {
        let folder = try temporaryDirectory("dl-file")
        defer { try? FileManager.default.removeItem(at: folder) }
        let length = 2 * 1024 * 1024 + 11
        try await withLoopback(router: FileTransferRoutes.router()) { server, client, _ in
            let target = folder.appendingPathComponent("report.bin")
            let file = try await client.download(FileGet(path: "/file?n=\(length)&type=application/pdf;%20q=1"), to: target)
            #expect(file.path == target.path)
            #expect(file.length == Int64(length))
            #expect(file.mimeType == "application/pdf")
            #expect(file.status == .ok)
            #expect(file.suggestedFileName == nil)
            #expect(file.headers[.contentLength] == String(length))
            #expect(try Data(contentsOf: target) == Data(PatternBody.bytes(length)))
            var info = stat()
            #expect(stat(target.path, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o600)
            #expect(contents(of: folder) == ["report.bin"], "no partial or temporary file is left")
            #expect(server.requestCount == 1)
            let metrics = try #require(file.metrics)
            let headBytes = metrics.bytesReceived - Int64(length)
            #expect(headBytes > 50 && headBytes < 1024, "the body plus one response head: \(metrics.bytesReceived)")
            #expect(metrics.httpVersion == "1.1")
            #expect(metrics.redirectCount == 0)
            #expect(metrics.remotePort == server.port)
        }
    }

    @Test func anExistingFileIsNotOverwrittenUnlessTheCallSaysSo() async throws {
        let folder = try temporaryDirectory("dl-exists")
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("keep.bin")
        try Data("keep me".utf8).write(to: target)
        try await withLoopback(router: FileTransferRoutes.router()) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) {
                try await client.download(FileGet(path: "/file?n=100"), to: target)
            }
            #expect(error?.code == .destinationExists)
            #expect(error?.stage == .prepare)
            #expect(error?.request?.redactedURL == server.baseURL + "/file?n=100")
            #expect(try Data(contentsOf: target) == Data("keep me".utf8))
            #expect(server.requestCount == 0, "nothing is sent")
            #expect(contents(of: folder) == ["keep.bin"])

            let replaced = try await client.download(FileGet(path: "/file?n=100"), to: target, options: DownloadOptions(replacesExisting: true))
            #expect(replaced.length == 100)
            #expect(try Data(contentsOf: target) == Data(PatternBody.bytes(100)))
            #expect(contents(of: folder) == ["keep.bin"])
        }
    }

    /// A folder that does not exist is a mistake found before anything is sent.
    @Test func aMissingDestinationFolderFailsAtPrepareAndSendsNothing() async throws {
        try await withLoopback(router: FileTransferRoutes.router()) { server, client, _ in
            let missing = URL(fileURLWithPath: "/nonexistent-\(UUID().uuidString)/", isDirectory: true)
            let error = await #expect(throws: CurlewError.self) {
                try await client.download(FileGet(path: "/file?n=100"), to: missing)
            }
            #expect(error?.code == .fileNotWritable)
            #expect(error?.stage == .prepare)
            #expect(error?.message == "the destination folder \(missing.path) does not exist")
            #expect(server.requestCount == 0, "nothing is sent")
        }
    }

    @Test func aSymbolicLinkPlantedAtTheTargetDuringTheDownloadIsNotFollowed() async throws {
        let folder = try temporaryDirectory("dl-symlink")
        defer { try? FileManager.default.removeItem(at: folder) }
        let victim = folder.appendingPathComponent("victim.txt")
        try Data("secret".utf8).write(to: victim)
        try await withLoopback(router: FileTransferRoutes.router()) { _, client, _ in
            let target = folder.appendingPathComponent("planted.bin")
            // Planted after the existence check (inside the download: a middleware runs before the transfer).
            let error = await #expect(throws: CurlewError.self) {
                try await client.download(FileGet(path: "/file?n=5000"), to: target) { options in
                    options.middleware.append(PlantSymlink(link: target.path, destination: victim.path))
                }
            }
            #expect(error?.code == .destinationExists)
            let victimBytes = try Data(contentsOf: victim)
            let linkTarget = try FileManager.default.destinationOfSymbolicLink(atPath: target.path)
            #expect(victimBytes == Data("secret".utf8), "the link's target is untouched")
            #expect(linkTarget == victim.path)
            #expect(contents(of: folder) == ["planted.bin", "victim.txt"], "the partial file was removed")
        }
    }

    @Test func aFolderDestinationUsesTheSanitisedSuggestedNameAndNeverOverwrites() async throws {
        let folder = try temporaryDirectory("dl-folder")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withLoopback(router: FileTransferRoutes.router()) { _, client, _ in
            let hostile = "attachment; filename=\"../../etc/passwd\"; filename*=UTF-8''..%2F..%2Frates%20%E2%82%AC.csv"
            let encoded = hostile.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? ""
            let first = try await client.download(FileGet(path: "/file?n=10&cd=\(encoded)"), to: folder)
            #expect(first.suggestedFileName == "rates €.csv")
            #expect(first.url.lastPathComponent == "rates €.csv")
            let second = try await client.download(FileGet(path: "/file?n=20&cd=\(encoded)"), to: folder)
            #expect(second.url.lastPathComponent == "rates € (1).csv")
            let third = try await client.download(FileGet(path: "/data/archive.tar.gz?n=1"), to: folder)
            #expect(third.url.lastPathComponent == "archive.tar.gz", "without Content-Disposition the URL names the file")
            #expect(contents(of: folder) == ["archive.tar.gz", "rates € (1).csv", "rates €.csv"].sorted())
            #expect(try Data(contentsOf: first.url).count == 10)
            #expect(try Data(contentsOf: second.url).count == 20)
        }
    }

    @Test func jsonInsteadOfAFileIsATypedErrorWithTheBodyAndNothingOnDisk() async throws {
        let folder = try temporaryDirectory("dl-json")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withLoopback(router: FileTransferRoutes.router()) { _, client, _ in
            let error = await #expect(throws: CurlewError.self) {
                try await client.download(FileGet(path: "/json"), to: folder.appendingPathComponent("x.bin"))
            }
            #expect(error?.code == .unexpectedContentType)
            #expect(error?.level == .httpStatus)
            #expect(error?.status == .ok)
            #expect(error?.responseBody == Data(#"{"code":7,"msg":"no such file"}"#.utf8))
            #expect(contents(of: folder).isEmpty)

            let status = await #expect(throws: CurlewError.self) {
                try await client.download(FileGet(path: "/status/404"), to: folder.appendingPathComponent("x.bin"))
            }
            #expect(status?.code == .unacceptableStatus)
            #expect(status?.status == .notFound)
            #expect(status?.responseBody == Data("failed 404".utf8))
            #expect(contents(of: folder).isEmpty)

            // A call that expects JSON says so.
            var options = DownloadOptions()
            options.refusedContentTypes = []
            let json = try await client.download(FileGet(path: "/json"), to: folder.appendingPathComponent("a.json"), options: options)
            #expect(json.mimeType == "application/json")
            #expect(contents(of: folder) == ["a.json"])
        }
    }

    @Test func aCutConnectionLeavesNothingWhenNotResumable() async throws {
        let folder = try temporaryDirectory("dl-cut")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withLoopback(router: FileTransferRoutes.router()) { _, client, _ in
            let error = await #expect(throws: CurlewError.self) {
                try await client.download(FileGet(path: "/file?n=\(1 << 20)&cut=\(300 * 1024)"), to: folder.appendingPathComponent("x.bin"))
            }
            #expect(error?.code == .connectionReset)
            #expect(contents(of: folder).isEmpty)
        }
    }

    @Test func cancellingAHundredTimesAtRandomPointsLeavesNoFileAndNoDescriptor() async throws {
        let folder = try temporaryDirectory("dl-cancel")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withLoopback(router: TransferRoutes.router()) { _, client, _ in
            var generator = SystemRandomNumberGenerator()
            for round in 0..<100 {
                let target = folder.appendingPathComponent("f\(round).bin")
                let task = Task { try await client.download(FileGet(path: "/stall?after=\(64 * 1024)"), to: target) }
                try await Task.sleep(for: .microseconds(Int.random(in: 0..<20_000, using: &generator)))
                task.cancel()
                let result = await task.result
                guard case .failure(let error) = result else {
                    Issue.record("round \(round): expected a cancellation")
                    continue
                }
                #expect(error is CancellationError, "round \(round): \(error)")
                #expect(access(target.path, F_OK) != 0)
            }
            #expect(await eventually { contents(of: folder).isEmpty }, "\(contents(of: folder))")
            #expect(await eventually { openDescriptors(into: folder).isEmpty })
        }
    }

    /// Run as a service, an area sweeps on its own: an expired file goes although no download
    /// starts; cancelling the service ends its loop.
    @Test func anAreaRunningAsAServiceSweepsWithoutADownload() async throws {
        let folder = try temporaryDirectory("dl-area-service")
        defer { try? FileManager.default.removeItem(at: folder) }
        let area = DownloadArea(directory: folder, lifetime: .seconds(2))
        #expect(area.sweepInterval == .seconds(1))
        let old = folder.appendingPathComponent("old.bin").path
        let fresh = folder.appendingPathComponent("fresh.bin").path
        #expect(FileManager.default.createFile(atPath: old, contents: Data([1, 2, 3])))
        #expect(FileManager.default.createFile(atPath: fresh, contents: Data([4])))
        // Modified an hour ago.
        var times = [timespec(tv_sec: time(nil) - 3600, tv_nsec: 0), timespec(tv_sec: time(nil) - 3600, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, old, &times, 0) == 0)
        let service = Task { try await area.run() }
        #expect(await eventually { access(old, F_OK) != 0 })
        #expect(access(fresh, F_OK) == 0, "younger than the lifetime")
        service.cancel()
        try await service.value
    }

    /// A program that never downloads again and does not run the area as a service still loses
    /// the shared area's expired files: creating a client sweeps it in the background.
    @Test func creatingAClientSweepsTheSharedArea() async throws {
        let area = DownloadArea.shared
        try FileManager.default.createDirectory(at: area.directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let name = UUID().uuidString
        let old = area.directory.appendingPathComponent("client-start-old-\(name).bin").path
        let fresh = area.directory.appendingPathComponent("client-start-fresh-\(name).bin").path
        defer { unlink(fresh) }
        #expect(FileManager.default.createFile(atPath: old, contents: Data([1, 2, 3])))
        #expect(FileManager.default.createFile(atPath: fresh, contents: Data([4])))
        // Modified two hours ago: past the shared area's one-hour lifetime.
        var times = [timespec(tv_sec: time(nil) - 7200, tv_nsec: 0), timespec(tv_sec: time(nil) - 7200, tv_nsec: 0)]
        #expect(utimensat(AT_FDCWD, old, &times, 0) == 0)
        // As if no client had been created in this process yet (other tests create them).
        area.lastBackgroundSweep.withLock { $0 = nil }
        _ = APIClient(baseURL: "http://127.0.0.1:9")
        #expect(await eventually { access(old, F_OK) != 0 })
        #expect(access(fresh, F_OK) == 0, "younger than the lifetime")
        // More clients within the sweep interval start no other sweep.
        let started = try #require(area.lastBackgroundSweep.withLock { $0 })
        for _ in 0..<3 { _ = APIClient(baseURL: "http://127.0.0.1:9") }
        #expect(area.lastBackgroundSweep.withLock { $0 } == started)
    }

    @Test func withoutDestinationTheFileLandsInTheAreaWhichSweepsOldFilesButNotBusyOnes() async throws {
        let folder = try temporaryDirectory("dl-area")
        defer { try? FileManager.default.removeItem(at: folder) }
        let area = DownloadArea(directory: folder.appendingPathComponent("area"), lifetime: .seconds(60))
        var options = DownloadOptions()
        options.area = area
        try await withLoopback(router: FileTransferRoutes.router()) { _, client, _ in
            let file = try await client.download(FileGet(path: "/file?n=64&cd=attachment;%20filename=a.bin"), options: options)
            #expect(file.url.deletingLastPathComponent().path == area.directory.path)
            #expect(file.url.lastPathComponent == "a.bin")
            var info = stat()
            #expect(lstat(area.directory.path, &info) == 0)
            #expect(info.st_mode & 0o777 == 0o700)
            #expect(area.sweep() == 0, "younger than the lifetime")
            // An hour later it is swept, unless in use.
            let later = Date().addingTimeInterval(3600)
            area.retain(file.path)
            #expect(area.sweep(now: later) == 0)
            area.release(file.path)
            #expect(area.sweep(now: later) == 1)
            #expect(access(file.path, F_OK) != 0)
        }
        // A folder of another mode (or a link) is refused.
        let link = folder.appendingPathComponent("linked")
        #expect(symlink(folder.path, link.path) == 0)
        var linked = DownloadOptions()
        linked.area = DownloadArea(directory: link, lifetime: .seconds(1))
        try await withLoopback(router: FileTransferRoutes.router()) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.download(FileGet(path: "/file?n=1"), options: linked) }
            #expect(error?.code == .fileNotWritable)
            #expect(server.requestCount == 0)
        }
    }
}

/// Plants a symbolic link at `link` before the transfer (a race an attacker could win).
struct PlantSymlink: APIMiddleware {
    let link: String
    let destination: String

    func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        symlink(destination, link)
        return try await next(request, context)
    }
}
