@testable import Curlew
@testable import CurlewCore
import Foundation
import Testing
import TestSupport

/// `br` and `zstd` bodies are decoded as `gzip` ones are: Curlew asks for them, decodes them
/// whole on one kept-alive connection, refuses a stream cut short or followed by other bytes
/// (`.protocolError`, the connection not reused), stops a bomb at
/// ``TransferOptions/maximumBodySize`` and refuses a `zstd` frame that asks for a window over
/// 8 MiB. Bodies that do not compress — stored by every encoder in blocks that decode to
/// exactly as many bytes as they take — decode in all four codings.
@Suite("Brotli and zstd bodies", .timeLimit(.minutes(2)))
struct BrotliAndZstdBodyTests {
    /// The decoded body of the compressible fixtures (~150 KB); made for each use (see
    /// `CompressedBodyTests.plain`).
    static var plain: Data { compressibleBody() }

    static func answer(_ body: Data, coding: String) -> ScriptedServer.Action {
        CompressedBodyTests.answer(body, coding: coding)
    }

    @Test func brotliAndZstdBodiesDecodeOnOneKeptAliveConnection() async throws {
        let plain = Self.plain
        let half = plain.count / 2
        let answers: [ScriptedServer.Action] = [
            Self.answer(brotliCompressed(plain), coding: "br"),
            Self.answer(zstdCompressed(plain), coding: "zstd"),
            CompressedBodyTests.chunked(brotliCompressed(plain), coding: "br"),
            CompressedBodyTests.chunked(zstdCompressed(plain), coding: "zstd"),
            // Two zstd frames, one after the other (RFC 8878 §3).
            Self.answer(zstdCompressed(plain.prefix(half)) + zstdCompressed(plain.dropFirst(half)), coding: "zstd"),
            Self.answer(brotliCompressed(plain), coding: "BR, identity"),
        ]
        let server = try ScriptedServer { index, _ in answers[index % answers.count] }
        defer { server.stop() }
        try await withTransport { transport in
            for index in answers.indices {
                let response = try await transport.send(PreparedRequest(method: .get, url: server.baseURL + "/\(index)", options: http1Options()))
                #expect(response.status.code == 200, "answer \(index)")
                #expect(response.body == plain, "answer \(index): \(response.body.count) bytes")
            }
        }
        #expect(Set(server.requests.map(\.connection)) == [0], "one kept-alive connection served them all")
        #expect(server.requests.map { $0.values("Accept-Encoding") } == Array(repeating: ["gzip, deflate, br, zstd"], count: answers.count))
    }

    /// 600 KB of random bytes in each coding: the encoders store them, in blocks that decode to
    /// exactly as many bytes as they take.
    @Test(arguments: ["gzip", "deflate", "br", "zstd"])
    func aBodyThatDoesNotCompressDecodes(coding: String) async throws {
        let plain = incompressibleBody(count: 600_000)
        let encoded: Data
        switch coding {
        case "gzip": encoded = compressed(plain, .gzip)
        case "deflate": encoded = compressed(plain, .zlib)
        case "br": encoded = brotliCompressed(plain)
        default: encoded = zstdCompressed(plain)
        }
        #expect(encoded.count > plain.count, "stored, not compressed: \(encoded.count) bytes")
        let server = try ScriptedServer { _, _ in Self.answer(encoded, coding: coding) }
        defer { server.stop() }
        let response = try await withTransport { transport in
            try await transport.send(PreparedRequest(method: .get, url: server.baseURL + "/random", options: http1Options()))
        }
        #expect(response.body == plain)
    }

    struct Broken: Sendable, CustomStringConvertible {
        var description: String
        /// Builds the answer from the brotli and zstd streams of ``plain``.
        var make: @Sendable (_ brotli: Data, _ zstd: Data) -> ScriptedServer.Action
        var answer: ScriptedServer.Action {
            let plain = BrotliAndZstdBodyTests.plain
            return make(brotliCompressed(plain), zstdCompressed(plain))
        }
        /// Words the error's message holds.
        var says: String
    }

    static let broken: [Broken] = [
        Broken(description: "br cut mid-stream, matching Content-Length", make: { br, _ in answer(br.prefix(br.count / 2), coding: "br") }, says: "truncated"),
        Broken(description: "br missing its last byte", make: { br, _ in answer(br.dropLast(1), coding: "br") }, says: "truncated"),
        Broken(description: "chunked br cut mid-stream, last chunk sent", make: { br, _ in CompressedBodyTests.chunked(br.prefix(br.count / 2), coding: "br") }, says: "truncated"),
        Broken(description: "br followed by other bytes", make: { br, _ in answer(br + Data("tail".utf8), coding: "br") }, says: "after the end"),
        Broken(
            description: "br with a corrupt byte",
            make: { br, _ in
                var bad = br
                bad[bad.count / 2] ^= 0xFF
                return answer(bad, coding: "br")
            }, says: "br"),
        Broken(description: "zstd cut mid-stream, matching Content-Length", make: { _, zstd in answer(zstd.prefix(zstd.count / 2), coding: "zstd") }, says: "truncated"),
        Broken(description: "zstd missing only its checksum", make: { _, zstd in answer(zstd.dropLast(4), coding: "zstd") }, says: "truncated"),
        Broken(
            description: "zstd with a wrong checksum",
            make: { _, zstd in
                var bad = zstd
                bad[bad.count - 1] ^= 0xFF
                return answer(bad, coding: "zstd")
            }, says: "zstd body is corrupt"),
        Broken(description: "zstd followed by bytes that are no frame", make: { _, zstd in answer(zstd + Data("tail-bytes".utf8), coding: "zstd") }, says: "zstd body is corrupt"),
        Broken(
            description: "a zstd frame that asks for a 32 MiB window", make: { _, _ in answer(zstdCompressed(Data("small".utf8), windowLog: 25), coding: "zstd") },
            says: "zstd body is corrupt"),
        Broken(description: "br inside gzip", make: { br, _ in answer(compressed(br, .gzip), coding: "br, gzip") }, says: "more than one content coding"),
        Broken(description: "a coding Curlew did not ask for", make: { br, _ in answer(br, coding: "compress") }, says: "was not asked for"),
    ]

    /// GET /first (a good answer on a kept-alive connection), GET /bad, GET /after.
    @Test(arguments: broken)
    func anIncompleteOrCorruptStreamIsAProtocolErrorAndTheConnectionIsNotReused(_ broken: Broken) async throws {
        let bad = broken.answer
        let server = try ScriptedServer { index, _ in index == 1 ? bad : .ok() }
        defer { server.stop() }
        try await withTransport { transport in
            _ = try await transport.send(PreparedRequest(method: .get, url: server.baseURL + "/first", options: http1Options()))
            let error = await #expect(throws: CurlewError.self, "\(broken)") {
                _ = try await transport.send(PreparedRequest(method: .get, url: server.baseURL + "/bad", options: http1Options()))
            }
            #expect(error?.code == .protocolError, "\(broken): \(error.map { "\($0)" } ?? "no error")")
            #expect(error?.message.contains(broken.says) == true, "\(broken): \(error?.message ?? "")")
            _ = try await transport.send(PreparedRequest(method: .get, url: server.baseURL + "/after", options: http1Options()))
        }
        #expect(server.requests.map(\.path) == ["/first", "/bad", "/after"], "\(broken): each request sent once")
        #expect(server.requests.map(\.connection) == [0, 0, 1], "\(broken): /after needed a new connection")
    }

    @Test(arguments: ["br", "zstd"])
    func aDecompressionBombStopsAtTheBodyLimit(coding: String) async throws {
        let zeros = Data(count: 64 << 20)
        let bomb = coding == "br" ? brotliCompressed(zeros) : zstdCompressed(zeros)
        #expect(bomb.count < 100_000, "64 MiB of zeros compress to \(bomb.count) bytes")
        let server = try ScriptedServer { index, _ in index == 0 ? Self.answer(bomb, coding: coding) : .ok() }
        defer { server.stop() }
        try await withTransport { transport in
            let error = await #expect(throws: CurlewError.self) {
                _ = try await transport.send(
                    PreparedRequest(method: .get, url: server.baseURL + "/bomb", options: http1Options { $0.maximumBodySize = 1 << 20 }))
            }
            #expect(error?.code == .bodyTooLarge)
            _ = try await transport.send(PreparedRequest(method: .get, url: server.baseURL + "/after", options: http1Options()))
        }
        #expect(server.requests.map(\.connection) == [0, 1], "the aborted connection is not reused")
    }

    private static func context(for request: PreparedRequest, _ body: ResponseBodyDisposition) -> TransportContext {
        TransportContext(requestName: "BrotliAndZstdBodyTests", identity: RequestIdentity(request, name: "BrotliAndZstdBodyTests"), responseBody: body)
    }

    /// ~1.9 MB decoded through a reader that holds back until the transfer paused: decoding
    /// continues where each pause left it, byte for byte.
    @Test(arguments: ["br", "zstd"])
    func aStreamedBodyDecodesAcrossPauses(coding: String) async throws {
        let plain = compressibleBody(lines: 50_000)
        let encoded = coding == "br" ? brotliCompressed(plain) : zstdCompressed(plain)
        let server = try ScriptedServer { _, _ in Self.answer(encoded, coding: coding) }
        defer { server.stop() }
        try await withTransport { transport in
            let request = PreparedRequest(method: .get, url: server.baseURL + "/stream", options: http1Options())
            let response = try await transport.send(request, context: Self.context(for: request, .stream(highWaterMark: 8192)))
            guard case .stream(let stream) = response.content else {
                Issue.record("expected a stream, got \(response.content)")
                return
            }
            var received = Data()
            var iterator = stream.makeAsyncIterator()
            if let first = try await iterator.next() { received.append(first) }
            #expect(await eventually { transport.statistics.pausedTransfers == 1 }, "the transfer paused for the reader")
            while let chunk = try await iterator.next() { received.append(chunk) }
            #expect(transport.statistics.receivePauses > 1)
            #expect(received == plain)
        }
    }
}
