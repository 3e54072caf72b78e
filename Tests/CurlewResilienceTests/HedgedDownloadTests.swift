@testable import Curlew
@testable import CurlewResilience
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// A download through a client that hedges: its exchanges all write one partial file, so a
/// hedge would be a second writer of the same file. A download is never hedged.
@Suite("Hedged downloads", .serialized, .timeLimit(.minutes(1)))
struct HedgedDownloadTests {
    /// Version `v` of the file: bytes that differ between versions at every offset.
    static func bytes(version: Int, length: Int) -> [UInt8] {
        (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8 &+ version &* 101) }
    }

    /// A resumed download whose file changed on the server (`200` with version 2) while a stale
    /// copy would still continue version 1 (`206`): without hedging the answer is the new version
    /// whole. A hedge (zero delay, so it would go out with the call) would write version 1's range
    /// into the same partial file as the `200` — a file of both versions — so none is sent: the
    /// server sees one resumed request, no `hedgeSent` is published, and the file is version 2.
    @Test func aResumedDownloadIsNeverHedged() async throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("curlew-hedged-download-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let length = 256 * 1024
        let cut = 160 * 1024
        let early = 32 * 1024
        let resumed = Mutex(0)
        let gate = TestGate()
        let handler: @Sendable (ServerRequest) async -> ServerResponse = { request in
            guard let range = request.header("Range") else {
                // The first download: version 1, cut after `cut` bytes (a partial file to resume).
                return .stream(headers: [("Content-Length", String(length)), ("ETag", "\"v1\""), ("Content-Type", "application/octet-stream")]) { writer in
                    try await writer.write(Array(Self.bytes(version: 1, length: length)[..<cut]))
                    throw CancellationError()
                }
            }
            let arrival = resumed.withLock { count in
                count += 1
                return count
            }
            if arrival == 1 {
                // The origin: the file changed, If-Range does not match, the whole new version —
                // its first bytes at once, the rest once the test let it go.
                let body = Self.bytes(version: 2, length: length)
                return .stream(headers: [("Content-Length", String(length)), ("ETag", "\"v2\""), ("Content-Type", "application/octet-stream")]) { writer in
                    try await writer.write(Array(body[..<early]))
                    while !gate.isOpen, !request.connection.isClosed { try? await Task.sleep(for: .milliseconds(5)) }
                    try await writer.write(Array(body[early...]))
                }
            }
            // A stale copy still serving version 1 continues it.
            let start = Int(range.dropFirst("bytes=".count).dropLast()) ?? 0
            return ServerResponse(
                status: 206,
                headers: [("ETag", "\"v1\""), ("Content-Range", "bytes \(start)-\(length - 1)/\(length)"), ("Content-Type", "application/octet-stream")],
                body: Array(Self.bytes(version: 1, length: length)[start...]))
        }
        try await withLoopback(handler: handler) { server, _, transport in
            let hedging = HedgingMiddleware(delay: .zero, budget: 1, burst: 10)
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [hedging]), transport: transport)
            let target = folder.appendingPathComponent("doc.bin")
            let options = DownloadOptions(resumable: true)
            let interrupted = await #expect(throws: CurlewError.self) {
                try await client.download(Doc(), to: target, options: options)
            }
            #expect(interrupted?.code == .connectionReset)
            #expect(server.requestCount == 1)
            let events = client.events
            let seen = Task {
                var kinds: [ClientEvent.Kind] = []
                for await event in events {
                    kinds.append(event.kind)
                    if event.kind == .finished || event.kind == .failed { break }
                }
                return kinds
            }
            async let landed = client.download(Doc(), to: target, options: options)
            // The origin's first bytes are on disk before the rest of its answer is let go.
            _ = await eventually { resumed.withLock { $0 } >= 1 }
            gate.open()
            let file = try await landed
            #expect(file.status == .ok)
            #expect(try Data(contentsOf: target) == Data(Self.bytes(version: 2, length: length)))
            #expect(resumed.withLock { $0 } == 1)
            #expect(server.requestCount == 2)
            let kinds = await seen.value
            #expect(!kinds.contains(.hedgeSent), "\(kinds)")
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []).sorted() == ["doc.bin"])
        }
    }

    /// A new download (resumable or not) through the same client: no hedge either — it would have
    /// failed at once on the partial file the first attempt created, a `hedgeSent` for a request
    /// that never left — and the file lands from the one request the server saw.
    @Test(arguments: [false, true])
    func aNewDownloadIsNeverHedged(resumable: Bool) async throws {
        let folder = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("curlew-hedged-new-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let body = Self.bytes(version: 1, length: 1000)
        try await withLoopback(handler: { _ in ServerResponse(status: 200, headers: [("Content-Type", "application/octet-stream")], body: body) }) {
            server, _, transport in
            let hedging = HedgingMiddleware(delay: .zero, budget: 1, burst: 10)
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [hedging]), transport: transport)
            let events = client.events
            let seen = Task {
                var kinds: [ClientEvent.Kind] = []
                for await event in events {
                    kinds.append(event.kind)
                    if event.kind == .finished || event.kind == .failed { break }
                }
                return kinds
            }
            let target = folder.appendingPathComponent("new.bin")
            let file = try await client.download(Doc(), to: target, options: DownloadOptions(resumable: resumable))
            #expect(file.status == .ok)
            #expect(try Data(contentsOf: target) == Data(body))
            #expect(server.requestCount == 1)
            let kinds = await seen.value
            #expect(!kinds.contains(.hedgeSent), "\(kinds)")
            #expect(((try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []) == ["new.bin"])
        }
    }

    struct Doc: Endpoint {
        typealias Response = Data
        var path: String { "doc" }
    }
}
