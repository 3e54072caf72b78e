@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import TestSupport
import Testing

/// Downloads from a real static-file server: nginx started by `scripts/nginx.sh`
/// (`CURLEW_NGINX_URL`, `CURLEW_NGINX_ROOT`). These tests fail when it is not running.
/// (The gibibyte to disk is `GeneratedDownloadTests`: generated on the fly, hashed by its server.)
@Suite("Downloads from nginx", .serialized, .timeLimit(.minutes(3)))
struct NginxDownloadTests {
    private func nginx() throws -> (url: String, root: String) {
        let environment = TestServers.environment
        guard let url = environment["CURLEW_NGINX_URL"], let root = environment["CURLEW_NGINX_ROOT"] else {
            throw NginxMissing()
        }
        return (url, root)
    }

    struct NginxMissing: Error, CustomStringConvertible {
        var description: String { "CURLEW_NGINX_URL is not set: start nginx with `eval \"$(bash scripts/nginx.sh start)\"`" }
    }

    @Test func aPartialFileIsCompletedWithNginxsRangeAndETagAndIsByteIdentical() async throws {
        let (url, root) = try nginx()
        let length = 5 * 1024 * 1024 + 7
        let name = "resume-\(UUID().uuidString).bin"
        try writePatternFile(root + "/" + name, length: length)
        defer { unlink(root + "/" + name) }
        let folder = try temporaryDirectory("nginx")
        defer { try? FileManager.default.removeItem(at: folder) }
        let client = APIClient(baseURL: url, transport: CurlTransport())
        let target = folder.appendingPathComponent(name)
        let options = DownloadOptions(resumable: true)

        // The first MiB is on disk with nginx's validator (as a cut download leaves it).
        struct Head: Endpoint {
            typealias Response = EmptyResponse
            var path: String
            var method: HTTPRequest.Method { .head }
        }
        let head = try await client.response(for: Head(path: "/" + name))
        let etag = try #require(head.headers[.eTag])
        let plan = try DownloadPlan(destination: target, url: url + "/" + name, options: options)
        let kept = 1024 * 1024
        try Data(PatternBody.bytes(kept)).write(to: URL(fileURLWithPath: plan.partialPath))
        let stored = ResumeRecord(url: url + "/" + name, validator: etag, completeLength: Int64(length), contentType: "", contentDisposition: "")
        #expect(stored.write(to: try #require(plan.recordPath)))

        let file = try await client.download(FileGet(path: "/" + name), to: target, options: options)
        #expect(file.status == .partialContent, "nginx honoured Range + If-Range")
        #expect(file.resumedBytes == Int64(kept))
        #expect(file.length == Int64(length))
        #expect(try sha256(ofFile: target.path) == sha256(ofPattern: length))
        #expect(contents(of: folder) == [name])

        // The file changed on the server: If-Range no longer matches, nginx sends it whole.
        let changed = try temporaryDirectory("nginx-changed")
        defer { try? FileManager.default.removeItem(at: changed) }
        let record = ResumeRecord(url: url + "/" + name, validator: "\"0-0\"", completeLength: Int64(length), contentType: "", contentDisposition: "")
        let changedPlan = try DownloadPlan(destination: changed.appendingPathComponent(name), url: url + "/" + name, options: options)
        try Data(repeating: 0xEE, count: 1000).write(to: URL(fileURLWithPath: changedPlan.partialPath))
        #expect(record.write(to: try #require(changedPlan.recordPath)))
        let whole = try await client.download(FileGet(path: "/" + name), to: changed.appendingPathComponent(name), options: options)
        #expect(whole.status == .ok)
        #expect(try sha256(ofFile: whole.path) == sha256(ofPattern: length))
    }

    /// FilesInAndOut's promise end to end: a resumable download cancelled part-way keeps its
    /// partial file and resume record, and the next call asks nginx for the rest (`Range` +
    /// `If-Range`) and lands the whole file, byte-identical, with exactly the kept bytes resumed.
    @Test func aCancelledResumableDownloadIsCompletedByTheNextCall() async throws {
        let (url, root) = try nginx()
        let length = 8 * 1024 * 1024
        let name = "cancelled-\(UUID().uuidString).bin"
        try writePatternFile(root + "/" + name, length: length)
        defer { unlink(root + "/" + name) }
        let folder = try temporaryDirectory("nginx-cancelled")
        defer { try? FileManager.default.removeItem(at: folder) }
        let client = APIClient(baseURL: url, transport: CurlTransport())
        let target = folder.appendingPathComponent(name)
        let options = DownloadOptions(resumable: true)

        let progress = TransferProgressMonitor()
        let first = Task {
            try await client.download(FileGet(path: "/" + name), to: target, options: options) {
                $0.maximumReceiveSpeed = 2 * 1024 * 1024  // so the cancellation lands mid-file
                $0.reportProgress(to: progress)
            }
        }
        for await update in progress where update.bytesReceived >= 1024 * 1024 {
            first.cancel()
            break
        }
        let outcome = await first.result
        #expect(throws: CancellationError.self) { try outcome.get() }
        let plan = try DownloadPlan(destination: target, url: url + "/" + name, options: options)
        let recordPath = try #require(plan.recordPath)
        #expect(FileManager.default.fileExists(atPath: recordPath), "the resume record stays")
        let kept = try #require(try FileManager.default.attributesOfItem(atPath: plan.partialPath)[.size] as? Int)
        #expect(kept >= 1024 * 1024 && kept < length)
        #expect(!FileManager.default.fileExists(atPath: target.path), "nothing at the destination yet")

        let file = try await client.download(FileGet(path: "/" + name), to: target, options: options)
        #expect(file.status == .partialContent)
        #expect(file.resumedBytes == Int64(kept))
        #expect(file.length == Int64(length))
        #expect(try sha256(ofFile: target.path) == sha256(ofPattern: length))
        #expect(contents(of: folder) == [name], "partial file, record and lock are gone")
    }
}
