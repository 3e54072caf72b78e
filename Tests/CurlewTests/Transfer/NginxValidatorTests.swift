@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import TestSupport
import Testing

/// Resuming against nginx with each validator it offers, and a partial file that is already
/// whole. These tests fail when nginx is not running (`scripts/test-servers.sh`).
@Suite("Resume validators against nginx", .serialized, .timeLimit(.minutes(2)))
struct NginxValidatorTests {
    struct Head: Endpoint {
        typealias Response = EmptyResponse
        var path: String
        var method: HTTPRequest.Method { .head }
    }

    struct NginxMissing: Error, CustomStringConvertible {
        var description: String { "CURLEW_NGINX_URL is not set: start nginx with `eval \"$(bash scripts/nginx.sh start)\"`" }
    }

    /// A file on nginx, a folder, and a partial file of `kept` bytes with a record naming `validator`
    /// (`nil`: nginx's ETag).
    private func prepared(
        kept: Int, length: Int, validator: (HTTPFields) -> String?,
        _ body: (APIClient, URL, DownloadPlan) async throws -> Void
    ) async throws {
        let environment = TestServers.environment
        guard let url = environment["CURLEW_NGINX_URL"], let root = environment["CURLEW_NGINX_ROOT"] else { throw NginxMissing() }
        let name = "validator-\(UUID().uuidString).bin"
        try writePatternFile(root + "/" + name, length: length)
        defer { unlink(root + "/" + name) }
        let folder = try temporaryDirectory("nginx-validator")
        defer { try? FileManager.default.removeItem(at: folder) }
        let client = APIClient(baseURL: url, transport: CurlTransport())
        let head = try await client.response(for: Head(path: "/" + name))
        let stored = try #require(validator(head.headers))
        let target = folder.appendingPathComponent(name)
        let plan = try DownloadPlan(destination: target, url: url + "/" + name, options: DownloadOptions(resumable: true))
        try Data(PatternBody.bytes(kept)).write(to: URL(fileURLWithPath: plan.partialPath))
        let record = ResumeRecord(url: url + "/" + name, validator: stored, completeLength: Int64(length), contentType: "", contentDisposition: "")
        #expect(record.write(to: try #require(plan.recordPath)))
        try await body(client, target, plan)
        #expect(contents(of: folder) == [name], "partial file, record and lock are gone")
    }

    /// nginx honours `If-Range` with its `Last-Modified` date: the range is appended.
    @Test func aLastModifiedRecordIsContinuedWithARange() async throws {
        let length = 2 * 1024 * 1024 + 3
        try await prepared(kept: 700 * 1024, length: length, validator: { $0[.lastModified] }) { client, target, _ in
            let file = try await client.download(FileGet(path: "/" + target.lastPathComponent), to: target, options: DownloadOptions(resumable: true))
            #expect(file.status == .partialContent)
            #expect(file.resumedBytes == 700 * 1024)
            #expect(try sha256(ofFile: target.path) == sha256(ofPattern: length))
        }
    }

    /// A partial file that is already the whole file: nginx answers `416 bytes */N`; the file is
    /// moved into place without another byte, and progress ends at its length.
    @Test func aWholePartialFileIsCompletedByNginxsFourSixteen() async throws {
        let length = 300 * 1024
        try await prepared(kept: length, length: length, validator: { $0[.eTag] }) { client, target, _ in
            let monitor = TransferProgressMonitor(interval: .zero)
            async let landed = client.download(FileGet(path: "/" + target.lastPathComponent), to: target, options: DownloadOptions(resumable: true)) {
                $0.reportProgress(to: monitor)
            }
            var values: [TransferProgress] = []
            for await value in monitor { values.append(value) }
            let file = try await landed
            #expect(file.status == .rangeNotSatisfiable)
            #expect(file.length == Int64(length))
            #expect(file.resumedBytes == Int64(length))
            #expect(values.last == TransferProgress(bytesReceived: Int64(length), totalBytesToReceive: Int64(length)))
            #expect(try sha256(ofFile: target.path) == sha256(ofPattern: length))
        }
    }
}
