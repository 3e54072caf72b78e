@testable import Curlew
@testable import CurlewCore
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// `download()` prepares its request once: the partial file's name and every exchange — a
/// restart included — use the same prepared request.
@Suite("Download prepares once", .serialized, .timeLimit(.minutes(1)))
struct DownloadPrepareTests {
    /// Counts how often the client reads the endpoint's headers (once per preparation).
    final class Reads: Sendable {
        let count = Mutex(0)
    }

    struct CountedGet: Endpoint {
        typealias Response = Data
        var path: String
        let reads: Reads
        var headers: [String: String] {
            reads.count.withLock { $0 += 1 }
            return ["X-Prepared": "yes"]
        }
    }

    @Test func aDownloadThatRestartsPreparesItsRequestOnce() async throws {
        let folder = try temporaryDirectory("prepare-once")
        defer { try? FileManager.default.removeItem(at: folder) }
        let length = 50_000
        try await withLoopback(router: FileTransferRoutes.router()) { server, client, _ in
            let baseline = Reads()
            _ = try await client.send(CountedGet(path: "/file?n=10", reads: baseline))
            let perPreparation = baseline.count.withLock { $0 }
            #expect(perPreparation >= 1)

            // A partial file longer than the resource: the 416 does not name its size, so the
            // download restarts from byte 0 — two exchanges.
            let path = "/file?n=\(length)&etag=%22p1%22"
            let target = folder.appendingPathComponent("p.bin")
            let options = DownloadOptions(resumable: true)
            try leavePartialDownload(of: server.baseURL + path, at: target, bytes: length + 10, validator: "\"p1\"", completeLength: length, options: options)

            let reads = Reads()
            let file = try await client.download(CountedGet(path: path, reads: reads), to: target, options: options)
            #expect(file.status == .ok)
            #expect(server.requests(path: "/file").count == 3, "the small send, the 416 and the restart")
            #expect(server.requests.suffix(2).allSatisfy { $0.header("X-Prepared") == "yes" })
            #expect(reads.count.withLock { $0 } == perPreparation, "prepared once for two exchanges")
        }
    }

    /// A resumable download through a cache whose partial file already holds every byte: the
    /// server answers its `Range` with `416` and an HTML page. The partial file is completed as
    /// it is — the page neither overwrites it nor is stored as the resource.
    @Test func aCachedResumableDownloadKeepsItsPartialFileWhenTheServerAnswers416() async throws {
        let folder = try temporaryDirectory("cached-416")
        defer { try? FileManager.default.removeItem(at: folder) }
        let length = 20_000
        var router = LoopbackRouter()
        router.on("GET", "/doc") { request, _ in
            if request.header("Range") != nil {
                return ServerResponse(
                    status: 416, headers: [("Content-Type", "text/html"), ("Content-Range", "bytes */\(length)"), ("Cache-Control", "max-age=300")],
                    body: Array("<html>range not satisfiable</html>".utf8))
            }
            return ServerResponse(headers: [("ETag", "\"d1\""), ("Cache-Control", "max-age=300")], body: PatternBody.bytes(length))
        }
        struct Doc: Endpoint {
            typealias Response = Data
            var path: String { "doc" }
            var options: RequestOptions {
                var options = RequestOptions()
                options.cache = .maxAge(.hours(1))
                return options
            }
        }
        try await withLoopback(router: router) { server, _, transport in
            let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [cache]), transport: transport)
            let target = folder.appendingPathComponent("doc.bin")
            let options = DownloadOptions(resumable: true)
            try leavePartialDownload(of: server.baseURL + "/doc", at: target, bytes: length, validator: "\"d1\"", completeLength: length, options: options)
            _ = try await client.download(Doc(), to: target, options: options)
            #expect(try Data(contentsOf: target) == Data(PatternBody.bytes(length)))
            await cache.waitForPendingWrites()
            // The 416 was not stored: a fresh download gets the resource.
            let again = folder.appendingPathComponent("again.bin")
            let file = try await client.download(Doc(), to: again)
            #expect(file.status == .ok)
            #expect(try Data(contentsOf: again) == Data(PatternBody.bytes(length)))
        }
    }

    /// A resumed `206` whose total is `*` ends before the last byte its range names (a
    /// close-delimited body cut short): the download fails with `.downloadIncomplete` — it was
    /// reported complete — and keeps the 700 bytes it has, for the next attempt to resume.
    @Test func aResumedRangeCutShortIsIncompleteAndKeepsItsBytes() async throws {
        let folder = try temporaryDirectory("short-206")
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try ScriptedServer { _, _ in
            let head = "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 500-999/*\r\nETag: \"s1\"\r\nConnection: close\r\n\r\n"
            return .send(Data(head.utf8) + Data(PatternBody.bytes(700).suffix(200)), close: true)
        }
        defer { server.stop() }
        try await withTransport { transport in
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL), transport: transport)
            let target = folder.appendingPathComponent("s.bin")
            let options = DownloadOptions(resumable: true)
            try leavePartialDownload(of: server.baseURL + "/s", at: target, bytes: 500, validator: "\"s1\"", completeLength: 1_000, options: options)
            let error = await #expect(throws: CurlewError.self) { try await client.download(Send(path: "s"), to: target, options: options) }
            #expect(error?.code == .downloadIncomplete)
            #expect(error?.message == "the download has 700 bytes, the server announced 1000")
            let plan = try DownloadPlan(destination: target, url: server.baseURL + "/s", options: options)
            #expect(try Data(contentsOf: URL(fileURLWithPath: plan.partialPath)) == Data(PatternBody.bytes(700)))
            #expect(!FileManager.default.fileExists(atPath: target.path))
        }
    }

    /// A part of the file without an `ETag` or `Last-Modified` (`bytes 0-99/1000`) gives nothing
    /// to ask for the rest with: the download fails with `.downloadIncomplete` after that one
    /// exchange — it does not ask for the same part again and again — and leaves nothing behind.
    @Test func aPartWithoutAValidatorFailsOnceInsteadOfBeingAskedForAgain() async throws {
        let folder = try temporaryDirectory("part-no-validator")
        defer { try? FileManager.default.removeItem(at: folder) }
        let server = try ScriptedServer { _, _ in
            let head = "HTTP/1.1 206 Partial Content\r\nContent-Range: bytes 0-99/1000\r\nContent-Length: 100\r\n\r\n"
            return .send(Data(head.utf8) + Data(PatternBody.bytes(100)), close: false)
        }
        defer { server.stop() }
        try await withTransport { transport in
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL), transport: transport)
            let events = EventLog(client)
            defer { events.stop() }
            let error = await #expect(throws: CurlewError.self) {
                try await client.download(Send(path: "p"), to: folder.appendingPathComponent("p.bin"), options: DownloadOptions(resumable: true))
            }
            #expect(error?.code == .downloadIncomplete)
            #expect(server.requests.count == 1)
            #expect(contents(of: folder).isEmpty)
            try await Task.sleep(for: .milliseconds(50))
            #expect(events.kinds([.finished, .failed]) == [.failed], "the failure is the call's")
        }
    }

    /// A queued download that restarts hands its tracker ticket back once, when the file is in
    /// place — not at the end of the abandoned exchange (HAccess's `queue:finish:`).
    @Test func aRestartingQueuedDownloadFinishesItsTicketWhenTheFileLands() async throws {
        let folder = try temporaryDirectory("ticket-restart")
        defer { try? FileManager.default.removeItem(at: folder) }
        let length = 400_000
        try await withLoopback(router: FileTransferRoutes.router()) { server, client, _ in
            let path = "/file?n=\(length)&etag=%22p1%22"
            let target = folder.appendingPathComponent("t.bin")
            let options = DownloadOptions(resumable: true)
            try leavePartialDownload(of: server.baseURL + path, at: target, bytes: length + 10, validator: "\"p1\"", completeLength: length, options: options)

            let tracker = RequestTracker()
            let ticket = tracker.ticket()
            let download = Task {
                try await client.download(Reads.Plain(path: path), to: target, options: options) {
                    $0.queue = "downloads"
                    $0.ticket = ticket
                }
            }
            await tracker.waitUntilFinished()
            // All done means done: the file is in place, whole, when the tracker says so.
            let landed = try Data(contentsOf: target)
            #expect(landed.count == length)
            #expect(landed == Data(PatternBody.bytes(length)))
            #expect(server.requests(path: "/file").count == 2, "the 416 and the restart")
            #expect(try await download.value.status == .ok)
            #expect(tracker.outstanding == 0)
        }
    }
    /// The resumed exchange that finds the file changed (a 206 with another `ETag`) is not the
    /// call's end: the download starts over and succeeds, and nothing reports a failure —
    /// neither `didFail` nor a `.failed` event.
    @Test func aDownloadThatStartsOverOnAChangedFileReportsNoFailure() async throws {
        let folder = try temporaryDirectory("restart-quiet")
        defer { try? FileManager.default.removeItem(at: folder) }
        let length = 100_000
        let state = ServedFileState()
        state.update {
            $0.etag = "\"p2\""
            $0.ignoresIfRange = true
        }
        try await withLoopback(router: FileTransferRoutes.router(state: state)) { server, client, _ in
            let path = "/file?n=\(length)"
            let target = folder.appendingPathComponent("c.bin")
            let options = DownloadOptions(resumable: true)
            try leavePartialDownload(of: server.baseURL + path, at: target, bytes: 1_000, validator: "\"p1\"", completeLength: length, options: options)

            let failures = Failures()
            let events = client.events
            let kinds = Task {
                var kinds: [ClientEvent.Kind] = []
                for await event in events where event.kind == .failed || event.kind == .finished {
                    kinds.append(event.kind)
                    if event.kind == .finished { break }
                }
                return kinds
            }
            let file = try await client.download(Failures.Get(path: path, failures: failures), to: target, options: options)
            #expect(file.status == .ok)
            #expect(try Data(contentsOf: target) == Data(PatternBody.bytes(length)))
            #expect(server.requests(path: "/file").count == 2, "the 206 of the changed file and the restart")
            #expect(failures.codes.withLock { $0 } == [])
            #expect(await kinds.value == [.finished])
        }
    }
}

/// What `didFail` heard.
final class Failures: Sendable {
    let codes = Mutex<[CurlewError.Code]>([])

    /// A plain GET of a file that records its failures.
    struct Get: Endpoint {
        typealias Response = Data
        var path: String
        let failures: Failures
        func didFail(_ error: CurlewError) { failures.codes.withLock { $0.append(error.code) } }
    }
}

extension DownloadPrepareTests.Reads {
    /// A plain GET of a file.
    struct Plain: Endpoint {
        typealias Response = Data
        var path: String
    }
}

/// Leaves what an interrupted resumable download of `url` into `target` leaves behind: a partial
/// file of `bytes` pattern bytes and its record (`validator`, `completeLength`).
private func leavePartialDownload(of url: String, at target: URL, bytes: Int, validator: String, completeLength: Int, options: DownloadOptions) throws {
    let plan = try DownloadPlan(destination: target, url: url, options: options)
    try Data(PatternBody.bytes(bytes)).write(to: URL(fileURLWithPath: plan.partialPath))
    let record = ResumeRecord(url: url, validator: validator, completeLength: Int64(completeLength), contentType: "", contentDisposition: "")
    #expect(record.write(to: try #require(plan.recordPath)))
}
