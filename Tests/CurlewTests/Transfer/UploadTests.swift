@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import LoopbackServer
import TestSupport
import Testing

/// A multipart upload with declared fields and dictionary parameters.
struct PhotoUpload: Endpoint {
    typealias Response = String
    var form: MultipartForm
    @Field var album: String
    var method: HTTPRequest.Method { .post }
    var path: String { "/multipart" }
    var parameters: [String: ParameterValue] { ["token": "t 1"] }
    var body: RequestPayload? { .multipart(form) }
}

/// A raw upload of a file.
struct RawUpload: Endpoint {
    typealias Response = String
    var file: String
    var method: HTTPRequest.Method { .put }
    var path: String { "/flaky-upload" }
    var body: RequestPayload? { .file(path: file) }
}

/// A multipart POST to any path.
struct FormPost: Endpoint {
    typealias Response = String
    var path: String
    var form: MultipartForm
    var method: HTTPRequest.Method { .post }
    var body: RequestPayload? { .multipart(form) }
}

@Suite("Uploads: multipart and raw", .serialized, .timeLimit(.minutes(3)))
struct UploadTests {
    @Test func aMultipartFormCarriesFieldsDataAndFilePartsWithExactHeadersAndLength() async throws {
        let folder = try temporaryDirectory("mp")
        defer { try? FileManager.default.removeItem(at: folder) }
        let photo = folder.appendingPathComponent("dunes.png")
        let photoBytes = PatternBody.bytes(300 * 1024 + 3)
        try Data(photoBytes).write(to: photo)
        var form = MultipartForm()
        form.append(field: "title", value: "Dunes at dusk")
        form.append(fileAt: photo.path)
        form.append(data: Data("raw".utf8), name: "blob", fileName: "blob", contentType: "application/x-raw")
        form.append(data: Data([1, 2, 3]), name: "evil\"\r\nX-Injected: 1", fileName: "a\"b\r\n.jpg")
        try await withLoopback(router: FileTransferRoutes.router()) { server, client, _ in
            let answer = try await client.send(PhotoUpload(form: form, album: "summer"))
            let lines = answer.split(separator: "\n").map(String.init)
            #expect(
                lines == [
                    "album|-|-|6|\(fnv1a(Array("summer".utf8)))",
                    "token|-|-|3|\(fnv1a(Array("t 1".utf8)))",
                    "title|-|-|13|\(fnv1a(Array("Dunes at dusk".utf8)))",
                    "file|dunes.png|image/png|\(photoBytes.count)|\(fnv1a(photoBytes))",
                    "blob|blob|application/x-raw|3|\(fnv1a(Array("raw".utf8)))",
                    "evil%22%0D%0AX-Injected: 1|a%22b%0D%0A.jpg|image/jpeg|3|\(fnv1a([1, 2, 3]))",
                ])
            let request = try #require(server.requests.last)
            #expect(request.header("Content-Length") == String(request.body.count))
            #expect(request.header("Transfer-Encoding") == nil)
            #expect(request.header("Content-Type") == form.contentType)
            let parts = try #require(MultipartParser.parse(request))
            #expect(
                parts.last?.headers == [
                    "Content-Disposition: form-data; name=\"evil%22%0D%0AX-Injected: 1\"; filename=\"a%22b%0D%0A.jpg\"",
                    "Content-Type: image/jpeg",
                ], "no header can be injected")
        }
    }

    @Test func aNulInANameOrABadContentTypeFailsBeforeAnythingIsSent() async throws {
        try await withLoopback(router: FileTransferRoutes.router()) { server, client, _ in
            var form = MultipartForm()
            form.append(field: "a\u{0}b", value: "x")
            let error = await #expect(throws: CurlewError.self) { try await client.send(FormPost(path: "/multipart", form: form)) }
            #expect(error?.code == .encodingFailed)
            var typed = MultipartForm()
            typed.append(data: Data(), name: "f", fileName: "f.bin", contentType: "text/plain\r\nX: 1")
            let typeError = await #expect(throws: CurlewError.self) { try await client.send(FormPost(path: "/multipart", form: typed)) }
            #expect(typeError?.code == .encodingFailed)
            var missing = MultipartForm()
            missing.append(fileAt: "/nonexistent/file.jpg")
            let missingError = await #expect(throws: CurlewError.self) { try await client.send(FormPost(path: "/multipart", form: missing)) }
            #expect(missingError?.code == .fileUnreadable)
            #expect(server.requestCount == 0)
        }
    }

    @Test func aFileUploadRetriedAfterA503SendsTheWholeFileAgain() async throws {
        let folder = try temporaryDirectory("retry")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("up.bin").path
        let bytes = PatternBody.bytes(2 * 1024 * 1024 + 1)
        try Data(bytes).write(to: URL(fileURLWithPath: path))
        let hits = ByteCounter()
        try await withLoopback(router: FileTransferRoutes.router(hits: hits)) { server, client, _ in
            let retry = RetryMiddleware(maximumAttempts: 2, baseDelay: .milliseconds(10), retryableMethods: [.put, .post])
            let answer = try await client.send(RawUpload(file: path)) { $0.middleware.append(retry) }
            #expect(answer == "\(bytes.count) \(fnv1a(bytes))")
            let requests = server.requests(path: "/flaky-upload")
            #expect(requests.count == 2)
            #expect(requests.map(\.body.count) == [bytes.count, bytes.count])
            #expect(requests.allSatisfy { $0.body == bytes })

            // A multipart form is replayable too: every part is sent again.
            var form = MultipartForm()
            form.append(fileAt: path, name: "doc", contentType: "application/octet-stream")
            let formHits = ByteCounter()
            try await withLoopback(router: FileTransferRoutes.router(hits: formHits)) { formServer, formClient, _ in
                _ = try await formClient.send(FormPost(path: "/flaky-upload", form: form)) { $0.middleware.append(retry) }
                let sent = formServer.requests(path: "/flaky-upload")
                #expect(sent.count == 2)
                #expect(sent[0].body == sent[1].body)
                #expect(MultipartParser.parse(sent[1])?.first?.body.elementsEqual(bytes) == true)
            }
            #expect(openDescriptors(into: folder).isEmpty, "the file is closed after each attempt")
        }
    }

    /// Resident memory is process-wide: the upload runs in a child process (`CURLEW_MEMORY_CHILD`)
    /// and the server (which keeps the whole body to verify it) in this one.
    @Test func aHalfGibibyteMultipartFileIsStreamedFromDiskInBoundedMemory() async throws {
        let length = 512 * 1024 * 1024
        if let url = ProcessInfo.processInfo.environment["CURLEW_UPLOAD_URL"],
            let path = ProcessInfo.processInfo.environment["CURLEW_UPLOAD_FILE"]
        {
            var form = MultipartForm()
            form.append(field: "kind", value: "backup")
            form.append(fileAt: path, name: "archive", contentType: "application/octet-stream")
            let client = APIClient(baseURL: url, transport: CurlTransport())
            let (answer, growth) = try await residentGrowth {
                try await client.send(FormPost(path: "/multipart", form: form)) { $0.totalTimeout = .seconds(300) }
            }
            print("CHILD-ANSWER \(answer.replacingOccurrences(of: "\n", with: " "))")
            #expect(growth < residentGrowthLimit, "resident memory grew by \(growth) bytes")
            return
        }
        let folder = try temporaryDirectory("mp-big")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("big.bin").path
        try writePatternFile(path, length: length)
        try await withLoopback(router: FileTransferRoutes.router()) { server, _, _ in
            let (status, output) = try await runInChildProcess(
                filter: "UploadTests/aHalfGibibyteMultipartFileIsStreamedFromDiskInBoundedMemory",
                environment: ["CURLEW_UPLOAD_URL": server.baseURL, "CURLEW_UPLOAD_FILE": path])
            #expect(status == 0, "child process output:\n\(output)")
            let request = try #require(server.requests(path: "/multipart").first)
            #expect(request.header("Content-Length") == String(request.body.count))
            let parts = try #require(MultipartParser.parse(request))
            #expect(parts.map(\.name) == ["kind", "archive"])
            #expect(
                parts.map(\.headers) == [
                    ["Content-Disposition: form-data; name=\"kind\""],
                    ["Content-Disposition: form-data; name=\"archive\"; filename=\"big.bin\"", "Content-Type: application/octet-stream"],
                ])
            var verifier = PatternBody.Verifier()
            parts[1].body.withUnsafeBytes { verifier.consume(Data($0)) }
            #expect(verifier.offset == length)
            #expect(verifier.mismatches == 0)
            #expect(output.contains("CHILD-ANSWER kind|-|-|6|"), "\(output.suffix(2000))")
        }
    }

    /// The server answers 413 after the head while 50 MiB are still being sent; run in a child
    /// process with SIGPIPE at its default action, so a SIGPIPE would kill it.
    @Test func anEarly413DuringALargeUploadNeverRaisesSIGPIPE() async throws {
        if let path = ProcessInfo.processInfo.environment["CURLEW_EARLY_FILE"] {
            signal(SIGPIPE, SIG_DFL)
            let server = try EarlyAnswerServer(answer: "HTTP/1.1 413 Payload Too Large\r\nContent-Length: 8\r\nConnection: close\r\n\r\ntoo big\n")
            defer { server.stop() }
            let client = APIClient(baseURL: "http://127.0.0.1:\(server.port)", transport: CurlTransport())
            struct Put: Endpoint {
                typealias Response = String
                var file: String
                var method: HTTPRequest.Method { .put }
                var path: String { "/upload" }
                var body: RequestPayload? { .file(path: file) }
            }
            let error = await #expect(throws: CurlewError.self) { try await client.send(Put(file: path)) }
            if error?.code == .unacceptableStatus {
                #expect(error?.status?.code == 413)
                #expect(error?.responseBody == Data("too big\n".utf8))
            } else {
                #expect(error?.level == .transport, "\(String(describing: error))")
            }
            print("CHILD-OUTCOME \(error?.code.description ?? "-") \(error?.status?.code ?? 0)")
            #expect(await eventually { openDescriptors(into: URL(fileURLWithPath: path).deletingLastPathComponent()).isEmpty })
            return
        }
        let folder = try temporaryDirectory("early")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("fifty.bin").path
        try writePatternFile(path, length: 50 * 1024 * 1024)
        let (status, output) = try await runInChildProcess(
            filter: "UploadTests/anEarly413DuringALargeUploadNeverRaisesSIGPIPE", environment: ["CURLEW_EARLY_FILE": path])
        #expect(status == 0, "child process output:\n\(output)")
        #expect(output.contains("CHILD-OUTCOME"), "\(output.suffix(2000))")
    }
}

/// Writes `length` pattern bytes to a new file, block by block.
func writePatternFile(_ path: String, length: Int) throws {
    _ = FileManager.default.createFile(atPath: path, contents: nil)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    var written = 0
    var index = 0
    while written < length {
        let count = min(PatternBody.blockSize, length - written)
        try handle.write(contentsOf: PatternBody.block(index, count: count))
        written += count
        index += 1
    }
}

/// The environment of a child that measures its resident memory. Under AddressSanitizer
/// (`scripts/sanitize.sh address`) the child's freed chunks are reused at once instead of waiting
/// in ASan's quarantine (256 MB by default, which alone would break a 32 MB bound); every other
/// check of ASan stays on.
func memoryChildEnvironment(_ environment: [String: String]) -> [String: String] {
    guard let options = environment["ASAN_OPTIONS"] else { return environment }
    var environment = environment
    environment["ASAN_OPTIONS"] = options + ":quarantine_size_mb=0:thread_local_quarantine_size_kb=0"
    return environment
}

/// Runs the test binary again with only `filter` and extra environment; returns its exit status
/// and output.
func runInChildProcess(filter: String, environment extra: [String: String]) async throws -> (Int32, String) {
    // posix_spawn, not Foundation's Process (see SpawnedProcess).
    try await SpawnedProcess.run(
        path: "/proc/self/exe", arguments: ["--testing-library", "swift-testing", "--filter", filter],
        environment: memoryChildEnvironment(ProcessInfo.processInfo.environment.merging(extra) { $1 }))
}
