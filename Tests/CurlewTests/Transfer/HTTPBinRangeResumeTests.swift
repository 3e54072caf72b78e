@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import TestSupport
import Testing

/// Resuming against httpbin's `/range/N` — a server nobody here wrote, whose `ETag` is bare
/// (`range1024`, not quoted). Fails without `CURLEW_HTTPBIN_URL`.
@Suite("Resuming from httpbin", .serialized, .timeLimit(.minutes(1)))
struct HTTPBinRangeResumeTests {
    @Test func aPartialFileIsContinuedWithHTTPBinsRange() async throws {
        let base = try TestServers.httpbin()
        let client = APIClient(baseURL: base, transport: CurlTransport.shared)
        let whole = try await client.send(FileGet(path: "range/1024"))
        #expect(whole.count == 1024)
        let folder = try temporaryDirectory("httpbin-range")
        defer { try? FileManager.default.removeItem(at: folder) }
        let target = folder.appendingPathComponent("r.bin")
        let options = DownloadOptions(resumable: true)
        let url = base + "/range/1024"
        let plan = try DownloadPlan(destination: target, url: url, options: options)
        try whole.prefix(100).write(to: URL(fileURLWithPath: plan.partialPath))
        let record = ResumeRecord(url: url, validator: "range1024", completeLength: 1024, contentType: "application/octet-stream", contentDisposition: "")
        #expect(record.write(to: try #require(plan.recordPath)))
        let file = try await client.download(FileGet(path: "range/1024"), to: target, options: options)
        #expect(file.status == .partialContent)
        #expect(file.resumedBytes == 100)
        #expect(file.length == 1024)
        #expect(try Data(contentsOf: target) == whole)
        #expect(contents(of: folder) == ["r.bin"])
    }
}
