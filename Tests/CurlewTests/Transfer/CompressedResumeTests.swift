@testable import Curlew
import Crypto
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// A resumable download of a `gzip`-encoded answer: the partial file holds decoded bytes, so the
/// rest is asked for unencoded and its range offsets are the file's.
@Suite("Resuming a compressed download", .serialized, .timeLimit(.minutes(2)))
struct CompressedResumeTests {
    /// 512 KiB drawn from 16 letters: compresses to about half, so the cut lands mid-stream.
    /// Made per test (a static `Data` would outlive the run and read as a leak to LeakSanitizer).
    static func makePlain() -> Data {
        var state: UInt32 = 2_463_534_242
        return Data(
            (0..<512 * 1024).map { _ in
                state ^= state << 13
                state ^= state >> 17
                state ^= state << 5
                return UInt8(ascii: "a") + UInt8(state % 16)
            })
    }
    static let lastModified = "Wed, 21 Oct 2015 07:28:00 GMT"

    /// What the route does, as nginx's `gzip_static` does: a client that accepts `gzip` gets the
    /// encoded file, and a range counts bytes of whichever form it is sent.
    struct Behaviour: Sendable {
        /// Cut the next answer after this many bytes of its body (then reset).
        var cutOnce: Int?
        /// Send the encoded form even to a client that asks for `identity` (a misbehaving server).
        var alwaysEncodes = false
    }

    /// The route's behaviour, changed by a test between requests.
    final class State: Sendable {
        let behaviour = Mutex(Behaviour())
        let plain = CompressedResumeTests.makePlain()
        let encoded: Data
        init() { encoded = compressed(plain, .gzip) }
    }

    /// `GET /gz`: the file, `Last-Modified` as its validator.
    static func router(_ state: State) -> LoopbackRouter {
        var router = LoopbackRouter()
        router.on("GET", "/gz") { request, _ in
            let current = state.behaviour.withLock { now in
                defer { now.cutOnce = nil }
                return now
            }
            let acceptsGzip = request.header("Accept-Encoding")?.contains("gzip") ?? false
            let encodes = acceptsGzip || current.alwaysEncodes
            let form = encodes ? state.encoded : state.plain
            var headers: [(name: String, value: String)] = [("Content-Type", "text/plain"), ("Last-Modified", lastModified)]
            if encodes { headers.append(("Content-Encoding", "gzip")) }
            var status = 200
            var start = 0
            if let range = request.header("Range"), range.hasPrefix("bytes="), range.hasSuffix("-"),
                let first = Int(range.dropFirst(6).dropLast()), request.header("If-Range") == lastModified, first < form.count
            {
                status = 206
                start = first
                headers.append(("Content-Range", "bytes \(first)-\(form.count - 1)/\(form.count)"))
            }
            headers.append(("Content-Length", String(form.count - start)))
            let body = Array(form[start...])
            let cut = current.cutOnce
            return .stream(status: status, headers: headers) { writer in
                try await writer.write(Array(body.prefix(cut ?? body.count)))
                if cut != nil { throw CancellationError() }
            }
        }
        return router
    }

    static func partialFile(in folder: URL) -> URL? {
        contents(of: folder).first { $0.hasSuffix(".curlew-partial") }.map { folder.appendingPathComponent($0) }
    }

    /// A first download of the encoded form, cut after 100,000 encoded bytes: it leaves a partial
    /// file of the decoded bytes that arrived.
    private func interrupted(
        _ state: State, _ body: (LoopbackServer, APIClient, URL, Int) async throws -> Void
    ) async throws {
        let folder = try temporaryDirectory("resume-gzip")
        defer { try? FileManager.default.removeItem(at: folder) }
        state.behaviour.withLock { $0.cutOnce = 100_000 }
        try await withLoopback(router: Self.router(state)) { server, client, _ in
            let target = folder.appendingPathComponent("words.txt")
            let error = await #expect(throws: CurlewError.self) {
                try await client.download(FileGet(path: "/gz"), to: target, options: DownloadOptions(resumable: true))
            }
            #expect(error?.code == .connectionReset)
            let partial = try #require(Self.partialFile(in: folder))
            let kept = try Data(contentsOf: partial)
            #expect(kept.count > 100_000, "decoded bytes: more than the encoded bytes that arrived")
            #expect(kept == state.plain.prefix(kept.count))
            #expect(server.requests.first?.header("Accept-Encoding") == "gzip, deflate, br, zstd")
            try await body(server, client, target, kept.count)
        }
    }

    @Test func theRestIsAskedForUnencodedFromTheDecodedOffsetAndTheFileIsByteIdentical() async throws {
        let state = State()
        try await interrupted(state) { server, client, target, kept in
            let file = try await client.download(FileGet(path: "/gz"), to: target, options: DownloadOptions(resumable: true))
            #expect(file.status == .partialContent)
            #expect(file.resumedBytes == Int64(kept))
            #expect(try Data(contentsOf: target) == state.plain)
            let resumed = try #require(server.requests.last)
            #expect(resumed.header("Range") == "bytes=\(kept)-")
            #expect(resumed.header("If-Range") == Self.lastModified)
            #expect(resumed.header("Accept-Encoding") == "identity")
            #expect(server.requestCount == 2)
        }
    }

    @Test func aServerThatRangesItsEncodedFormAnywayMakesTheDownloadStartOver() async throws {
        let state = State()
        try await interrupted(state) { server, client, target, kept in
            state.behaviour.withLock { $0.alwaysEncodes = true }
            let file = try await client.download(FileGet(path: "/gz"), to: target, options: DownloadOptions(resumable: true))
            #expect(file.status == .ok)
            #expect(file.resumedBytes == 0)
            #expect(try Data(contentsOf: target) == state.plain)
            let requests = server.requests
            #expect(requests.count == 3)
            #expect(requests[1].header("Range") == "bytes=\(kept)-")
            #expect(requests[2].header("Range") == nil, "the restart asks for the whole file")
        }
    }
}
