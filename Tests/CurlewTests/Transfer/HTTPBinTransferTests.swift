@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import TestSupport
import Testing

/// Transfers against httpbin — a server nobody here wrote — started on 127.0.0.1 by
/// `scripts/test.sh` (`scripts/httpbin.sh`). These tests fail, not skip, without
/// `CURLEW_HTTPBIN_URL`.
@Suite("Transfers against httpbin", .serialized, .timeLimit(.minutes(1)))
struct HTTPBinTransferTests {
    struct Echo: Decodable {
        var form: [String: String]
        var files: [String: String]
        var headers: [String: String]
    }

    struct EchoForm: Endpoint {
        typealias Response = Echo
        var form: MultipartForm
        var method: HTTPRequest.Method { .post }
        var path: String { "anything" }
        var body: RequestPayload? { .multipart(form) }
    }

    @Test func anythingEchoesEveryPartOfAMultipartFormStreamedFromDisk() async throws {
        let folder = try temporaryDirectory("httpbin-mp")
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("notes.txt").path
        let text = String(repeating: "line of notes\n", count: 20_000)
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        var form = MultipartForm()
        form.append(field: "title", value: "Dunes \"at night\"")
        form.append(fileAt: path, name: "notes", contentType: "text/plain")
        let client = APIClient(baseURL: try TestServers.httpbin(), transport: CurlTransport())
        let echo = try await client.send(EchoForm(form: form))
        #expect(echo.form == ["title": "Dunes \"at night\""])
        #expect(echo.files == ["notes": text])
        #expect(echo.headers["Content-Type"]?.hasPrefix("multipart/form-data; boundary=") == true)
        #expect(echo.headers["Content-Length"].flatMap(Int.init) ?? 0 > text.utf8.count)
    }

    struct Encoded: Decodable {
        var gzipped: Bool?
        var deflated: Bool?
        var brotli: Bool?
        var headers: [String: String]
    }

    struct EncodedGet: Endpoint {
        typealias Response = Encoded
        var coding: String
        var path: String { coding }
    }

    /// httpbin's `/gzip`, `/deflate` and `/brotli` answer in that coding (its own encoders:
    /// Python's zlib and brotlicffi); each decodes, and httpbin saw what Curlew asked for.
    @Test(arguments: ["gzip", "deflate", "brotli"])
    func httpbinsEncodedAnswersDecode(coding: String) async throws {
        let client = APIClient(baseURL: try TestServers.httpbin(), transport: CurlTransport())
        let answer = try await client.send(EncodedGet(coding: coding))
        switch coding {
        case "gzip": #expect(answer.gzipped == true)
        case "deflate": #expect(answer.deflated == true)
        default: #expect(answer.brotli == true)
        }
        #expect(answer.headers["Accept-Encoding"] == "gzip, deflate, br, zstd")
    }

    @Test func aStreamBytesDownloadAndADripDownloadLandWhole() async throws {
        let folder = try temporaryDirectory("httpbin-dl")
        defer { try? FileManager.default.removeItem(at: folder) }
        let client = APIClient(baseURL: try TestServers.httpbin(), transport: CurlTransport())
        let streamed = try await client.download(FileGet(path: "/stream-bytes/50000?seed=7&chunk_size=4096"), to: folder.appendingPathComponent("s.bin"))
        #expect(streamed.length == 50_000, "chunked, without Content-Length")
        // /drip sends 2000 bytes over a second: above the stall detector's 100 B/s over 3 s.
        var options = DownloadOptions()
        options.stallTimeout = .seconds(3)
        options.minimumSpeed = 100
        let dripped = try await client.download(FileGet(path: "/drip?numbytes=2000&duration=1&delay=0"), to: folder.appendingPathComponent("d.bin"), options: options)
        #expect(dripped.length == 2000)
        #expect(try Data(contentsOf: dripped.url) == Data(repeating: UInt8(ascii: "*"), count: 2000))
        #expect(contents(of: folder) == ["d.bin", "s.bin"])
    }
}
