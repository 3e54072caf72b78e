@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

/// Resumable downloads: Range + If-Range after a failure, and every anomaly.
@Suite("Resumable downloads", .serialized, .timeLimit(.minutes(2)))
struct ResumeTests {
    let length = 1024 * 1024 + 5
    let cut = 300 * 1024
    let resumable = DownloadOptions(resumable: true)

    /// Runs a first download cut after `cut` bytes, so a partial file and its record exist.
    private func interrupted(
        _ folder: URL, state: ServedFileState, query: String = "", _ body: (LoopbackServer, APIClient, URL) async throws -> Void
    ) async throws {
        state.update { $0.cutOnce = cut }
        try await withLoopback(router: FileTransferRoutes.router(state: state)) { server, client, _ in
            let target = folder.appendingPathComponent("big.bin")
            let error = await #expect(throws: CurlewError.self) {
                try await client.download(FileGet(path: "/file?n=\(length)\(query)"), to: target, options: resumable)
            }
            #expect(error?.code == .connectionReset)
            #expect(access(target.path, F_OK) != 0, "no file at the final path")
            let kept = contents(of: folder)
            #expect(kept.count == 2 && kept.allSatisfy { $0.hasPrefix(".curlew-") }, "partial file and record: \(kept)")
            #expect(partialSize(folder) == Int64(cut))
            try await body(server, client, target)
        }
    }

    private func partialSize(_ folder: URL) -> Int64? {
        guard let name = contents(of: folder).first(where: { $0.hasSuffix(".curlew-partial") }) else { return nil }
        let attributes = try? FileManager.default.attributesOfItem(atPath: folder.appendingPathComponent(name).path)
        return (attributes?[.size] as? NSNumber)?.int64Value
    }

    @Test func aDownloadCutMidBodyContinuesWithRangeAndIfRangeAndIsByteIdentical() async throws {
        let folder = try temporaryDirectory("resume")
        defer { try? FileManager.default.removeItem(at: folder) }
        let state = ServedFileState()
        state.update { $0.etag = "\"v1\"" }
        try await interrupted(folder, state: state) { server, _, target in
            // A new client: only what is on disk carries over (as after a restart).
            let client = APIClient(baseURL: server.baseURL, transport: CurlTransport())
            let file = try await client.download(FileGet(path: "/file?n=\(length)"), to: target, options: resumable)
            #expect(file.status == .partialContent)
            #expect(file.resumedBytes == Int64(cut))
            #expect(file.length == Int64(length))
            let received = try #require(file.metrics?.bytesReceived)
            #expect(received > Int64(length - cut) && received < Int64(length - cut + 1024), "the second exchange's bytes only: \(received)")
            #expect(try sha256(ofFile: target.path) == sha256(ofPattern: length))
            #expect(contents(of: folder) == ["big.bin"])
            let second = try #require(server.requests.last)
            #expect(second.header("Range") == "bytes=\(cut)-")
            #expect(second.header("If-Range") == "\"v1\"")
            #expect(server.requestCount == 2)
        }
    }

    @Test func lastModifiedServesAsValidatorWithoutAnETag() async throws {
        let folder = try temporaryDirectory("resume-lm")
        defer { try? FileManager.default.removeItem(at: folder) }
        let date = "Wed, 21 Oct 2015 07:28:00 GMT"
        let query = "&lastmod=\(date.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")"
        try await interrupted(folder, state: ServedFileState(), query: query) { server, client, target in
            let file = try await client.download(FileGet(path: "/file?n=\(length)\(query)"), to: target, options: resumable)
            #expect(file.status == .partialContent)
            #expect(server.requests.last?.header("If-Range") == date)
            #expect(try sha256(ofFile: target.path) == sha256(ofPattern: length))
        }
    }

    @Test func aChangedFileIsSentWholeAndReplacesThePartialInsteadOfBeingAppended() async throws {
        let folder = try temporaryDirectory("resume-200")
        defer { try? FileManager.default.removeItem(at: folder) }
        let state = ServedFileState()
        state.update { $0.etag = "\"v1\"" }
        try await interrupted(folder, state: state) { server, client, target in
            state.update { $0.etag = "\"v2\"" }
            let file = try await client.download(FileGet(path: "/file?n=\(length)"), to: target, options: resumable)
            #expect(file.status == .ok)
            #expect(file.resumedBytes == 0)
            #expect(file.length == Int64(length))
            #expect(try sha256(ofFile: target.path) == sha256(ofPattern: length))
            #expect(server.requests.last?.header("If-Range") == "\"v1\"")
            #expect(contents(of: folder) == ["big.bin"])
        }
    }

    @Test func a206WithAnotherETagRestartsFromScratch() async throws {
        let folder = try temporaryDirectory("resume-etag")
        defer { try? FileManager.default.removeItem(at: folder) }
        let state = ServedFileState()
        state.update { $0.etag = "\"v1\"" }
        try await interrupted(folder, state: state) { server, client, target in
            state.update {
                $0.etag = "\"v2\""
                $0.ignoresIfRange = true
            }
            let file = try await client.download(FileGet(path: "/file?n=\(length)"), to: target, options: resumable)
            #expect(file.status == .ok)
            #expect(try sha256(ofFile: target.path) == sha256(ofPattern: length))
            let requests = server.requests
            #expect(requests.count == 3)
            #expect(requests[1].header("Range") == "bytes=\(cut)-")
            #expect(requests[2].header("Range") == nil, "the restart asks for the whole file")
        }
    }

    /// A range that starts after the partial file's end cannot continue it: the download starts
    /// over once, without `Range`, and lands whole.
    @Test func aRangeStartingAfterThePartialFileRestartsTheDownloadOnce() async throws {
        let folder = try temporaryDirectory("resume-gap")
        defer { try? FileManager.default.removeItem(at: folder) }
        let state = ServedFileState()
        state.update { $0.etag = "\"v1\"" }
        try await interrupted(folder, state: state) { server, client, target in
            state.update { $0.badRange = true }
            let file = try await client.download(FileGet(path: "/file?n=\(length)"), to: target, options: resumable)
            #expect(file.status == .ok)
            #expect(file.resumedBytes == 0)
            #expect(try sha256(ofFile: file.path) == sha256(ofPattern: length))
            let requests = server.requests
            #expect(requests.count == 3)
            #expect(requests[1].header("Range") == "bytes=\(cut)-")
            #expect(requests[2].header("Range") == nil, "the restart asks for the whole file")
            #expect(contents(of: folder) == ["big.bin"], "no partial file or record left")
        }
    }

    /// A range that starts before the partial file's end repeats bytes the file holds: they are
    /// dropped, the rest appended, and the file is byte-identical.
    @Test func aRangeStartingBeforeThePartialFileEndDropsTheBytesItAlreadyHas() async throws {
        let folder = try temporaryDirectory("resume-overlap")
        defer { try? FileManager.default.removeItem(at: folder) }
        let state = ServedFileState()
        state.update { $0.etag = "\"v1\"" }
        try await interrupted(folder, state: state) { server, client, target in
            state.update { $0.startsEarlyBy = 1_000 }
            let progress = TransferProgressMonitor(interval: .zero)
            let file = try await client.download(FileGet(path: "/file?n=\(length)"), to: target, options: resumable) {
                $0.reportProgress(to: progress)
            }
            #expect(file.status == .partialContent)
            #expect(file.resumedBytes == Int64(cut))
            #expect(file.length == Int64(length))
            #expect(try sha256(ofFile: file.path) == sha256(ofPattern: length))
            #expect(server.requests.count == 2)
            var values: [TransferProgress] = []
            for await value in progress { values.append(value) }
            #expect(values.last?.bytesReceived == Int64(length), "progress ends at the file's length, the overlap counted once")
            #expect(values.allSatisfy { ($0.bytesReceived) <= Int64(length) })
        }
    }

    /// A server that sends a large file in parts (`bytes 307200-507199/1048581`): each part is
    /// appended and the rest asked for from the file's new end, until it is whole — also when
    /// the parts carry no validator (they continue the version the stored one names).
    @Test(arguments: [false, true])
    func aFileSentInPartsIsAskedForPartByPartUntilWhole(withoutValidators: Bool) async throws {
        let folder = try temporaryDirectory("resume-parts")
        defer { try? FileManager.default.removeItem(at: folder) }
        let state = ServedFileState()
        state.update { $0.etag = "\"v1\"" }
        let part = 200_000
        try await interrupted(folder, state: state) { server, client, target in
            state.update {
                $0.partSize = part
                $0.rangesWithoutValidators = withoutValidators
            }
            let progress = TransferProgressMonitor(interval: .zero)
            let file = try await client.download(FileGet(path: "/file?n=\(length)"), to: target, options: resumable) {
                $0.reportProgress(to: progress)
            }
            #expect(file.status == .partialContent)
            #expect(file.resumedBytes == Int64(cut))
            #expect(try sha256(ofFile: file.path) == sha256(ofPattern: length))
            let ranges = server.requests.dropFirst().map { $0.header("Range") }
            let starts = stride(from: cut, to: length, by: part).map { "bytes=\($0)-" }
            #expect(ranges == starts)
            #expect(server.requests.dropFirst().allSatisfy { $0.header("If-Range") == "\"v1\"" })
            var values: [TransferProgress] = []
            for await value in progress { values.append(value) }
            #expect(values.last?.bytesReceived == Int64(length))
            #expect(zip(values, values.dropFirst()).allSatisfy { $0.bytesReceived <= $1.bytesReceived }, "monotonic through the parts")
            #expect(contents(of: folder) == ["big.bin"])
        }
    }

    /// A server whose parts announce more bytes than its last answer has (`416 bytes */N` after
    /// parts of `N + 5`) contradicts itself: the download fails with `.downloadIncomplete` —
    /// reported as the call's failure — and keeps nothing.
    @Test func partsThatAnnounceMoreThanTheServerHasFailAsTheCallsFailure() async throws {
        let folder = try temporaryDirectory("resume-parts-short")
        defer { try? FileManager.default.removeItem(at: folder) }
        let state = ServedFileState()
        state.update { $0.etag = "\"v1\"" }
        try await interrupted(folder, state: state) { server, client, target in
            state.update {
                $0.partSize = 400_000
                $0.extraTotal = 5
            }
            let events = EventLog(client)
            defer { events.stop() }
            let error = await #expect(throws: CurlewError.self) {
                try await client.download(FileGet(path: "/file?n=\(length)"), to: target, options: resumable)
            }
            #expect(error?.code == .downloadIncomplete)
            #expect(server.requests.last?.header("Range") == "bytes=\(length)-")
            #expect(contents(of: folder).isEmpty)
            try await Task.sleep(for: .milliseconds(50))
            #expect(events.kinds([.failed]) == [.failed])
        }
    }

    /// The name and type the answer that began the file gave survive a resumed `206` that
    /// leaves them out: a folder download lands under the `Content-Disposition` name.
    @Test func aResumedRangeWithoutANameKeepsTheNameTheFileBeganWith() async throws {
        let folder = try temporaryDirectory("resume-name")
        defer { try? FileManager.default.removeItem(at: folder) }
        let state = ServedFileState()
        state.update { $0.etag = "\"v1\"" }
        state.update { $0.cutOnce = cut }
        try await withLoopback(router: FileTransferRoutes.router(state: state)) { server, client, _ in
            let get = FileGet(path: "/file?n=\(length)&type=application/pdf&cd=attachment%3B%20filename%3Dreport.pdf")
            let folderURL = URL(fileURLWithPath: folder.path + "/")
            _ = await #expect(throws: CurlewError.self) { try await client.download(get, to: folderURL, options: resumable) }
            state.update { $0.rangesWithoutNameOrType = true }
            let file = try await client.download(get, to: folderURL, options: resumable)
            #expect(file.status == .partialContent)
            #expect(file.url.lastPathComponent == "report.pdf")
            #expect(file.suggestedFileName == "report.pdf")
            #expect(file.mimeType == "application/pdf")
            #expect(try sha256(ofFile: file.path) == sha256(ofPattern: length))
            #expect(server.requests.count == 2)
        }
    }

    @Test func aWrongCompleteLengthFailsTheFinalLengthCheck() async throws {
        let folder = try temporaryDirectory("resume-length")
        defer { try? FileManager.default.removeItem(at: folder) }
        let state = ServedFileState()
        state.update { $0.etag = "\"v1\"" }
        try await interrupted(folder, state: state) { _, client, target in
            state.update { $0.extraTotal = 5 }
            let error = await #expect(throws: CurlewError.self) {
                try await client.download(FileGet(path: "/file?n=\(length)"), to: target, options: resumable)
            }
            #expect(error?.code == .downloadIncomplete)
            #expect(access(target.path, F_OK) != 0)
            #expect(contents(of: folder).isEmpty, "a file of the wrong length is not kept")
        }
    }

    @Test func a416NamingThePartialSizeCompletesItAndAnyOther416Restarts() async throws {
        let folder = try temporaryDirectory("resume-416")
        defer { try? FileManager.default.removeItem(at: folder) }
        let state = ServedFileState()
        state.update { $0.etag = "\"v1\"" }
        try await interrupted(folder, state: state) { server, client, target in
            // The rest arrived some other way: the partial file is the whole file.
            let partial = try #require(contents(of: folder).first { $0.hasSuffix(".curlew-partial") })
            try Data(PatternBody.bytes(length)).write(to: folder.appendingPathComponent(partial))
            let file = try await client.download(FileGet(path: "/file?n=\(length)"), to: target, options: resumable)
            #expect(file.status == .rangeNotSatisfiable)
            #expect(file.length == Int64(length))
            #expect(file.mimeType == "application/octet-stream", "from the resume record")
            #expect(server.requests.last?.header("Range") == "bytes=\(length)-")
            #expect(server.requestCount == 2)
            #expect(try sha256(ofFile: target.path) == sha256(ofPattern: length))
            #expect(contents(of: folder) == ["big.bin"])
        }
        let other = try temporaryDirectory("resume-416b")
        defer { try? FileManager.default.removeItem(at: other) }
        try await interrupted(other, state: state) { server, client, target in
            let partial = try #require(contents(of: other).first { $0.hasSuffix(".curlew-partial") })
            try Data(PatternBody.bytes(length + 10)).write(to: other.appendingPathComponent(partial))
            let file = try await client.download(FileGet(path: "/file?n=\(length)"), to: target, options: resumable)
            #expect(file.status == .ok)
            #expect(try sha256(ofFile: target.path) == sha256(ofPattern: length))
            let requests = server.requests
            #expect(requests.count == 3)
            #expect(requests[1].header("Range") == "bytes=\(length + 10)-")
            #expect(requests[2].header("Range") == nil)
        }
    }

    @Test func aCancelledResumableDownloadKeepsItsPartialFile() async throws {
        let folder = try temporaryDirectory("resume-cancel")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withLoopback(router: TransferRoutes.router()) { _, client, _ in
            let target = folder.appendingPathComponent("s.bin")
            let task = Task { try await client.download(FileGet(path: "/stall?after=\(100 * 1024)"), to: target, options: resumable) }
            #expect(await eventually { (partialSize(folder) ?? 0) == 100 * 1024 })
            task.cancel()
            let result = await task.result
            guard case .failure(let error) = result else {
                Issue.record("expected a cancellation")
                return
            }
            #expect(error is CancellationError)
            let kept = partialSize(folder)
            #expect(kept == Int64(100 * 1024), "\(contents(of: folder))")
            #expect(access(target.path, F_OK) != 0)
        }
    }
}
