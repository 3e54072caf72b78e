@testable import Curlew
@testable import CurlewCore
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// Two resumable downloads into one partial file: the second is refused with
/// `.downloadInProgress` while the first holds the partial file's `flock`, in this process or in
/// another one.
@Suite("Resumable download lock", .serialized, .timeLimit(.minutes(1)))
struct DownloadLockTests {
    let resumable = DownloadOptions(resumable: true)

    private func partialSize(_ folder: URL) -> Int64? {
        guard let name = contents(of: folder).first(where: { $0.hasSuffix(".curlew-partial") }) else { return nil }
        var info = stat()
        guard lstat(folder.appendingPathComponent(name).path, &info) == 0 else { return nil }
        return Int64(info.st_size)
    }

    @Test func aSecondResumableDownloadIntoTheSamePartialFileIsRefusedWhileTheFirstRuns() async throws {
        let folder = try temporaryDirectory("lock-same")
        defer { try? FileManager.default.removeItem(at: folder) }
        let held = 256 * 1024
        try await withLoopback(router: SlowRoutes.router()) { server, client, _ in
            let target = folder.appendingPathComponent("same.bin")
            let options = resumable
            let first = Task { try await client.download(FileGet(path: "/hold?after=\(held)"), to: target, options: options) }
            #expect(await eventually { partialSize(folder) == Int64(held) }, "\(contents(of: folder))")
            #expect(contents(of: folder).contains { $0.hasSuffix(".curlew-lock") })

            let error = await #expect(throws: CurlewError.self) {
                try await client.download(FileGet(path: "/hold?after=\(held)"), to: target, options: options)
            }
            #expect(error?.code == .downloadInProgress)
            #expect(error?.level == .invalidRequest)
            #expect(server.requestCount == 1, "the refused download sent nothing")
            #expect(partialSize(folder) == Int64(held), "and did not touch the partial file")

            first.cancel()
            #expect(await first.result.failureIsCancellation)
            let left = contents(of: folder)
            #expect(left.count == 2 && left.allSatisfy { $0.hasSuffix(".curlew-partial") || $0.hasSuffix(".curlew-resume") }, "lock released and removed, partial kept: \(left)")
        }
    }

    /// Another `DownloadArea` on the same folder (another process's, in effect) never sweeps the
    /// partial file, resume record or lock of a resumable download that is running — however old
    /// their modification times — while it sweeps an abandoned download's old files.
    @Test func aSweepLeavesTheFilesOfARunningResumableDownloadAlone() async throws {
        let folder = try temporaryDirectory("lock-sweep")
        defer { try? FileManager.default.removeItem(at: folder) }
        let held = 256 * 1024
        let mine = DownloadArea(directory: folder, lifetime: .seconds(1))
        let other = DownloadArea(directory: folder, lifetime: .seconds(1))
        try await withLoopback(router: SlowRoutes.router()) { _, client, _ in
            var options = resumable
            options.area = mine
            let first = Task { try await client.download(FileGet(path: "/hold?after=\(held)"), options: options) }
            #expect(await eventually { partialSize(folder) == Int64(held) }, "\(contents(of: folder))")
            // An abandoned download's files, unlocked.
            for suffix in ["curlew-partial", "curlew-resume", "curlew-lock"] {
                try Data("old".utf8).write(to: folder.appendingPathComponent(".curlew-0123abcd.\(suffix)"))
            }
            let running = contents(of: folder).filter { !$0.contains("0123abcd") }
            #expect(running.count == 3, "\(running)")
            // Every file two hours old.
            let past = Date().addingTimeInterval(-7_200).timeIntervalSince1970
            var times = [timeval(tv_sec: Int(past), tv_usec: 0), timeval(tv_sec: Int(past), tv_usec: 0)]
            for name in contents(of: folder) { #expect(utimes(folder.appendingPathComponent(name).path, &times) == 0) }
            #expect(other.sweep() == 3, "the abandoned download's three files")
            #expect(contents(of: folder).sorted() == running.sorted(), "the running download's files stay")
            first.cancel()
            #expect(await first.result.failureIsCancellation)
        }
    }

    @Test func manyConcurrentResumableDownloadsOfOneFileLandItOnceByteIdentical() async throws {
        let folder = try temporaryDirectory("lock-many")
        defer { try? FileManager.default.removeItem(at: folder) }
        let length = 2 * 1024 * 1024 + 3
        try await withLoopback(router: SlowRoutes.router()) { _, client, _ in
            let target = folder.appendingPathComponent("one.bin")
            let options = resumable
            let results = await withTaskGroup(of: Result<DownloadedFile, any Error>.self) { group in
                for _ in 0..<8 {
                    group.addTask {
                        do {
                            return .success(try await client.download(FileGet(path: "/file?n=\(length)&etag=%22e1%22"), to: target, options: options))
                        } catch {
                            return .failure(error)
                        }
                    }
                }
                var all: [Result<DownloadedFile, any Error>] = []
                for await result in group { all.append(result) }
                return all
            }
            let landed = results.filter { if case .success = $0 { true } else { false } }
            #expect(landed.count == 1, "exactly one lands at a fixed file URL")
            for case .failure(let error) in results {
                let code = (error as? CurlewError)?.code
                #expect(code == .downloadInProgress || code == .destinationExists, "\(error)")
            }
            let digest = try sha256(ofFile: target.path)
            #expect(digest == sha256(ofPattern: length))
            // A download that found the name taken at the end keeps its (complete) partial file,
            // as every failed resumable download does; nothing else is visible.
            #expect(contents(of: folder).filter { !$0.hasPrefix(".") } == ["one.bin"])
            #expect(!contents(of: folder).contains { $0.hasSuffix(".curlew-lock") })
        }
    }

    @Test func aLockHeldByAnotherProcessRefusesTheDownloadUntilThatProcessEnds() async throws {
        let folder = try temporaryDirectory("lock-child")
        defer { try? FileManager.default.removeItem(at: folder) }
        let length = 100_000
        try await withLoopback(router: SlowRoutes.router()) { server, client, _ in
            let target = folder.appendingPathComponent("child.bin")
            let path = "/file?n=\(length)&etag=%22c1%22"
            let plan = try DownloadPlan(destination: target, url: server.baseURL + path, options: resumable)
            let lockPath = try #require(plan.lockPath)

            // util-linux flock(1) takes flock(LOCK_EX) on the same file in a child process
            // (posix_spawn, not Foundation's Process: see SpawnedProcess).
            // It holds the lock until its standard input closes.
            let pipe = Pipe()
            let input = Pipe()
            let child = try SpawnedProcess(
                path: "/usr/bin/flock", arguments: ["-n", lockPath, "-c", "echo held; read line || true"],
                standardInput: input.fileHandleForReading.fileDescriptor,
                standardOutput: pipe.fileHandleForWriting.fileDescriptor)
            // Only the child keeps these ends: the line read below sees the end of the output if
            // flock fails, and the child sees the end of its input when the write end closes.
            try pipe.fileHandleForWriting.close()
            try input.fileHandleForReading.close()
            defer { if child.isRunning { child.terminate() } }
            let line = pipe.fileHandleForReading.availableLineOrWait()
            #expect(line == "held")

            let error = await #expect(throws: CurlewError.self) {
                try await client.download(FileGet(path: path), to: target, options: resumable)
            }
            #expect(error?.code == .downloadInProgress)
            #expect(server.requestCount == 0, "nothing was sent while another process held the lock")
            #expect(access(target.path, F_OK) != 0)

            try input.fileHandleForWriting.close()
            #expect(await child.terminationStatus() == 0)
            let file = try await client.download(FileGet(path: path), to: target, options: resumable)
            #expect(file.length == Int64(length))
            #expect(try sha256(ofFile: target.path) == sha256(ofPattern: length))
            #expect(contents(of: folder) == ["child.bin"], "the lock file is removed when the download ends")
        }
    }
}

extension Result where Failure == any Error {
    /// Whether this is a failure with `CancellationError`.
    var failureIsCancellation: Bool {
        if case .failure(let error) = self { return error is CancellationError }
        return false
    }
}

extension FileHandle {
    /// Reads up to the first newline (blocking), without it.
    func availableLineOrWait() -> String {
        var bytes: [UInt8] = []
        while true {
            let next = readData(ofLength: 1)
            guard let byte = next.first, byte != UInt8(ascii: "\n") else { break }
            bytes.append(byte)
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
