@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

/// Appends bytes to a file (or, with a negative count, cuts them off) after the request was
/// prepared (the multipart form measured it) and before it is sent.
struct GrowFile: APIMiddleware {
    let path: String
    let by: Int
    var kind: MiddlewareKind { MiddlewareKind("grow-file") }

    nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        if by >= 0 {
            try handle.seekToEnd()
            try handle.write(contentsOf: Data(repeating: 0x41, count: by))
        } else {
            let size = try handle.seekToEnd()
            try handle.truncate(atOffset: size - UInt64(-by))
        }
        try handle.close()
        return try await next(request, context)
    }
}

/// Uploads of files from a demanding user's side: missing files, files that change while sent,
/// Unicode names, redirects.
@Suite("File uploads: edge cases", .serialized, .timeLimit(.minutes(2)))
struct FileUploadEdgeTests {
    /// A missing file fails before anything is sent, raw or in a form, with `.fileUnreadable`.
    @Test func aMissingFileToUploadFailsBeforeAnythingIsSent() async throws {
        let missing = "/nonexistent-\(UUID().uuidString)/photo.jpg"
        var form = MultipartForm()
        form.append(fileAt: missing)
        try await withLoopback(router: FileTransferRoutes.router()) { server, client, _ in
            let raw = await #expect(throws: CurlewError.self) { try await client.send(RawUpload(file: missing)) }
            #expect(raw?.code == .fileUnreadable)
            #expect(raw?.stage == .prepare)
            let multipart = await #expect(throws: CurlewError.self) { try await client.send(FormPost(path: "/multipart", form: form)) }
            #expect(multipart?.code == .fileUnreadable)
            #expect(multipart?.stage == .prepare)
            #expect(server.requestCount == 0)
        }
    }

    /// A form measures its files when the request is prepared; a file that grew or shrank by
    /// the time it is sent fails the upload (never a silently cut or padded part).
    @Test(arguments: [10, -10])
    func aFormFileThatChangesSizeAfterPreparingFailsTheUpload(change: Int) async throws {
        let folder = try temporaryDirectory("audit-grow")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("log.txt").path
        try Data(repeating: 0x61, count: 64 * 1024).write(to: URL(fileURLWithPath: path))
        var form = MultipartForm()
        form.append(fileAt: path, contentType: "text/plain")
        try await withLoopback(router: FileTransferRoutes.router()) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) {
                try await client.send(FormPost(path: "/multipart", form: form)) { $0.middleware.append(GrowFile(path: path, by: change)) }
            }
            #expect(error?.code == .bodyStreamFailed)
            #expect(error?.message.contains("log.txt") == true, "\(error?.message ?? "")")
            #expect(server.requests.allSatisfy { $0.body.count != Int($0.header("Content-Length") ?? "") ?? -1 }, "no complete body arrived")
        }
    }

    /// An empty file in a form is measured like any other: if it has bytes by the time it is
    /// sent, the upload fails as for a file that grew from any other size (never a 0-byte part).
    @Test func anEmptyFormFileThatGrowsAfterPreparingFailsTheUpload() async throws {
        let folder = try temporaryDirectory("audit-grow-empty")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("empty.log").path
        try Data().write(to: URL(fileURLWithPath: path))
        var form = MultipartForm()
        form.append(fileAt: path, contentType: "text/plain")
        try await withLoopback(router: FileTransferRoutes.router()) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) {
                try await client.send(FormPost(path: "/multipart", form: form)) { $0.middleware.append(GrowFile(path: path, by: 10)) }
            }
            #expect(error?.code == .bodyStreamFailed)
            #expect(error?.message.contains("empty.log changed size while it was sent (0 bytes announced, now 10)") == true, "\(error?.message ?? "")")
            #expect(server.requests.allSatisfy { $0.body.count != Int($0.header("Content-Length") ?? "") ?? -1 }, "no complete body arrived")
            // Empty again, and left alone: sent as the empty part it is.
            try Data().write(to: URL(fileURLWithPath: path))
            let answer = try await client.send(FormPost(path: "/multipart", form: form))
            #expect(answer == "file|empty.log|text/plain|0|\(fnv1a([UInt8]()))")
        }
    }

    /// An empty raw file body that has bytes by the time its request goes out fails with
    /// `.fileUnreadable` before anything is sent, as a file that grew from any other size fails
    /// at its last bytes — libcurl never reads an empty body, so it is checked right before the
    /// request is sent. The upload waits for the host's one connection (opened and measured the
    /// file), the file grows meanwhile, and the server sees only the call that held the
    /// connection.
    @Test func anEmptyRawFileThatGrowsBeforeItIsSentFailsUnsent() async throws {
        let folder = try temporaryDirectory("audit-raw-grow-empty")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("empty.bin").path
        try Data().write(to: URL(fileURLWithPath: path))
        let gate = TestGate()
        var router = FileTransferRoutes.router()
        router.on("GET", "/n/1") { request, _ in await gate.holdingFirstNumber(request) }
        router.on("PUT", "/length") { request, _ in .text("\(request.body.count)") }
        let oneConnection = CurlTransport.Configuration(maximumConnectionsPerHost: 1, engineCount: 1)
        try await withLoopback(transportConfiguration: oneConnection, router: router) { server, client, transport in
            let holder = Task { try await client.send(Numbered(index: 1)) }
            await waitForRequests(server, count: 1)
            let upload = Task { try await client.send(RawUpload(file: path)) }
            #expect(await eventually { transport.connectionStatistics.queuedForConnection >= 1 })
            let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
            try handle.write(contentsOf: Data(repeating: 0x41, count: 10))
            try handle.close()
            gate.open()
            #expect(try await holder.value == "/n/1")
            let error = await #expect(throws: CurlewError.self) { try await upload.value }
            #expect(error?.code == .fileUnreadable)
            #expect(error?.message.contains("empty.bin changed size while it was sent (0 bytes announced, now 10)") == true, "\(error?.message ?? "")")
            #expect(server.requestCount == 1)
            #expect(server.requests.map(\.path) == ["/n/1"])
            // Empty again, and left alone: sent as the empty body it is.
            try Data().write(to: URL(fileURLWithPath: path))
            let sent = try await client.send(Send(method: .put, path: "length", body: .file(path: path)))
            #expect(sent == "0")
            #expect(server.requests.last?.header("Content-Length") == "0")
        }
    }

    /// A raw file body is sent at the size it has when it is opened; a file that grows while it
    /// is sent fails at its last bytes instead of sending a torn prefix.
    @Test func aRawFileThatGrowsWhileItIsSentFailsAtItsLastBytes() throws {
        let folder = try temporaryDirectory("audit-raw-grow")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("data.bin").path
        try Data(repeating: 1, count: 1000).write(to: URL(fileURLWithPath: path))
        let summary = RequestSummary(method: .put, url: "http://127.0.0.1/x")
        let body = try FileRequestBody(path: path, request: summary)
        var buffer = [UInt8](repeating: 0, count: 600)
        let first = buffer.withUnsafeMutableBytes { body.read(into: $0) }
        guard case .bytes(600) = first else {
            Issue.record("expected 600 bytes, got \(first)")
            return
        }
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
        try handle.seekToEnd()
        try handle.write(contentsOf: Data(repeating: 2, count: 5))
        try handle.close()
        let second = buffer.withUnsafeMutableBytes { body.read(into: $0) }
        guard case .abort(let error) = second else {
            Issue.record("expected an abort, got \(second)")
            return
        }
        #expect(error.code == .fileUnreadable)
        #expect(error.message.contains("changed size"), "\(error.message)")
        // The same file, unchanged, is read to its end.
        let again = try FileRequestBody(path: path, request: summary)
        var total = 0
        while case .bytes(let count) = buffer.withUnsafeMutableBytes({ again.read(into: $0) }), count > 0 { total += count }
        #expect(total == 1005)
    }

    /// File names in a form keep Unicode as UTF-8 and the content type follows the extension.
    @Test func aUnicodeFileNameArrivesAsUTF8WithTheTypeOfItsExtension() async throws {
        let folder = try temporaryDirectory("audit-unicode")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("résumé 日本.pdf").path
        try Data("%PDF".utf8).write(to: URL(fileURLWithPath: path))
        var form = MultipartForm()
        form.append(fileAt: path, name: "cv")
        try await withLoopback(router: FileTransferRoutes.router()) { _, client, _ in
            let answer = try await client.send(FormPost(path: "/multipart", form: form))
            #expect(answer == "cv|résumé 日本.pdf|application/pdf|4|\(fnv1a(Array("%PDF".utf8)))")
        }
    }

    struct Echo: Decodable {
        var method: String
        var data: String
        var files: [String: String]
        var headers: [String: String]
    }

    struct Redirected: Endpoint {
        typealias Response = Echo
        var status: Int
        var payload: RequestPayload
        var method: HTTPRequest.Method { .put }
        var path: String { "redirect-to" }
        var query: [URLQueryItem] { [URLQueryItem(name: "url", value: "/anything"), URLQueryItem(name: "status_code", value: "\(status)")] }
        var body: RequestPayload? { payload }
    }

    /// A `307`/`308` to a file upload sends the whole file again to the new location, raw or in
    /// a form (httpbin's echo of what it received).
    @Test(arguments: [307, 308])
    func aRedirectedFileUploadSendsTheWholeFileAgain(status: Int) async throws {
        let folder = try temporaryDirectory("audit-307")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("notes.txt").path
        let text = String(repeating: "notes line\n", count: 30_000)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        let client = APIClient(baseURL: try TestServers.httpbin(), transport: CurlTransport.shared)
        let raw = try await client.send(Redirected(status: status, payload: .file(path: path, contentType: "text/plain")))
        #expect(raw.method == "PUT")
        #expect(raw.data == text)
        #expect(raw.headers["Content-Length"] == String(text.utf8.count))
        var form = MultipartForm()
        form.append(fileAt: path, name: "notes", contentType: "text/plain")
        let multipart = try await client.send(Redirected(status: status, payload: .multipart(form)))
        #expect(multipart.method == "PUT")
        #expect(multipart.files == ["notes": text])
    }
}
