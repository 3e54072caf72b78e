@testable import Curlew
@testable import CurlewCore
import Foundation
import Testing
import TestSupport

/// An incomplete compressed stream is truncation, whatever the framing says: a `gzip` or
/// `deflate` body cut short fails with `.protocolError` — also when `Content-Length` matches the
/// cut bytes or the chunked framing ends properly — and its connection is not used again. Whole
/// bodies still decode, on one kept-alive connection; a decompression bomb still stops at
/// ``TransferOptions/maximumBodySize``; streamed and file bodies behave the same.
@Suite("Compressed bodies: truncation, decoding, limits", .timeLimit(.minutes(2)))
struct CompressedBodyTests {
    /// The decoded body of every fixture (~150 KB, so the compressed stream spans several reads
    /// and decoded pieces). Made for each use, as are the broken answers: a `Data` kept in a
    /// global or a test argument until the process exits is reported by LeakSanitizer, which
    /// cannot see the tagged pointer Data keeps its storage in
    /// (scripts/sanitizers/lsan-global-data-repro.sh).
    static var plain: Data { compressibleBody() }

    /// A keep-alive `200` with `Content-Encoding: coding` whose `Content-Length` is exactly
    /// `body.count`.
    static func answer(_ body: Data, coding: String) -> ScriptedServer.Action {
        var bytes = Data("HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Encoding: \(coding)\r\nContent-Length: \(body.count)\r\n\r\n".utf8)
        bytes.append(body)
        return .send(bytes, close: false)
    }

    /// A keep-alive chunked `200` with `Content-Encoding: coding`, properly ended by a last chunk.
    static func chunked(_ body: Data, coding: String) -> ScriptedServer.Action {
        var bytes = Data("HTTP/1.1 200 OK\r\nContent-Encoding: \(coding)\r\nTransfer-Encoding: chunked\r\n\r\n".utf8)
        var rest = body[...]
        while !rest.isEmpty {
            let chunk = rest.prefix(4000)
            bytes.append(Data((String(chunk.count, radix: 16) + "\r\n").utf8))
            bytes.append(chunk)
            bytes.append(Data("\r\n".utf8))
            rest = rest.dropFirst(chunk.count)
        }
        bytes.append(Data("0\r\n\r\n".utf8))
        return .send(bytes, close: false)
    }

    struct Broken: Sendable, CustomStringConvertible {
        var description: String
        /// Builds the answer from the gzip, zlib and raw deflate streams of ``plain``.
        var make: @Sendable (_ gzip: Data, _ zlib: Data, _ raw: Data) -> ScriptedServer.Action
        /// The answer, built when the test case runs (see ``plain``).
        var answer: ScriptedServer.Action {
            let plain = CompressedBodyTests.plain
            return make(compressed(plain, .gzip), compressed(plain, .zlib), compressed(plain, .raw))
        }
    }

    static let broken: [Broken] = [
        Broken(description: "gzip cut mid-stream, matching Content-Length") { gzip, _, _ in CompressedBodyTests.answer(gzip.prefix(gzip.count / 2), coding: "gzip") },
        Broken(description: "gzip missing only its 8-byte trailer") { gzip, _, _ in CompressedBodyTests.answer(gzip.dropLast(8), coding: "gzip") },
        Broken(description: "gzip missing its last trailer byte") { gzip, _, _ in CompressedBodyTests.answer(gzip.dropLast(1), coding: "gzip") },
        Broken(description: "gzip cut inside its header") { gzip, _, _ in CompressedBodyTests.answer(gzip.prefix(6), coding: "gzip") },
        Broken(description: "x-gzip cut mid-stream") { gzip, _, _ in CompressedBodyTests.answer(gzip.prefix(gzip.count / 3), coding: "x-gzip") },
        Broken(description: "deflate (zlib) cut mid-stream") { _, zlib, _ in CompressedBodyTests.answer(zlib.prefix(zlib.count / 2), coding: "deflate") },
        Broken(description: "deflate (zlib) missing only its Adler-32") { _, zlib, _ in CompressedBodyTests.answer(zlib.dropLast(4), coding: "deflate") },
        Broken(description: "raw deflate cut mid-stream") { _, _, raw in CompressedBodyTests.answer(raw.prefix(raw.count / 2), coding: "deflate") },
        Broken(description: "chunked gzip cut mid-stream, last chunk sent") { gzip, _, _ in CompressedBodyTests.chunked(gzip.prefix(gzip.count / 2), coding: "gzip") },
        Broken(description: "chunked gzip missing its trailer, last chunk sent") { gzip, _, _ in CompressedBodyTests.chunked(gzip.dropLast(8), coding: "gzip") },
        Broken(description: "gzip with a wrong CRC-32") { gzip, _, _ in
            var badCRC = gzip
            badCRC[badCRC.count - 8] ^= 0xFF
            return CompressedBodyTests.answer(badCRC, coding: "gzip")
        },
        Broken(description: "deflate followed by other bytes") { _, zlib, _ in CompressedBodyTests.answer(zlib + Data("tail".utf8), coding: "deflate") },
        Broken(description: "gzip followed by bytes that are no gzip member") { gzip, _, _ in CompressedBodyTests.answer(gzip + Data("tail-bytes".utf8), coding: "gzip") },
        Broken(description: "a coding Curlew did not ask for") { gzip, _, _ in CompressedBodyTests.answer(gzip, coding: "compress") },
        Broken(description: "two codings") { gzip, _, _ in CompressedBodyTests.answer(compressed(gzip, .gzip), coding: "gzip, gzip") },
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
            #expect(error?.level == .transport, "\(broken)")
            let after = try await transport.send(PreparedRequest(method: .get, url: server.baseURL + "/after", options: http1Options()))
            #expect(after.status.code == 200)
        }
        let requests = server.requests
        #expect(requests.map(\.path) == ["/first", "/bad", "/after"], "\(broken): each request sent once")
        #expect(requests.map(\.connection) == [0, 0, 1], "\(broken): /bad reused the good connection, /after needed a new one")
        #expect(requests[1].values("Accept-Encoding") == ["gzip, deflate, br, zstd"])
    }

    @Test func wholeStreamsDecodeOnOneKeptAliveConnection() async throws {
        let gzip = compressed(Self.plain, .gzip)
        let half = Self.plain.count / 2
        let twoMembers = compressed(Self.plain.prefix(half), .gzip) + compressed(Self.plain.dropFirst(half), .gzip)
        let answers: [ScriptedServer.Action] = [
            Self.answer(gzip, coding: "gzip"),
            Self.answer(gzip, coding: "x-gzip"),
            Self.answer(compressed(Self.plain, .zlib), coding: "deflate"),
            Self.answer(compressed(Self.plain, .raw), coding: "deflate"),
            Self.chunked(gzip, coding: "gzip"),
            Self.answer(twoMembers, coding: "gzip"),
            Self.answer(gzip, coding: "GZIP, identity"),
            Self.answer(Self.plain, coding: "identity"),
            .send(Data("HTTP/1.1 200 OK\r\nContent-Length: \(Self.plain.count)\r\n\r\n".utf8) + Self.plain, close: false),
        ]
        let server = try ScriptedServer { index, _ in answers[index % answers.count] }
        defer { server.stop() }
        try await withTransport { transport in
            for index in answers.indices {
                let response = try await transport.send(PreparedRequest(method: .get, url: server.baseURL + "/\(index)", options: http1Options()))
                #expect(response.status.code == 200, "answer \(index)")
                #expect(response.body == Self.plain, "answer \(index): \(response.body.count) bytes")
            }
        }
        #expect(Set(server.requests.map(\.connection)) == [0], "one kept-alive connection served them all")
    }

    @Test func withoutAskingForCompressionTheBodyIsPassedOnAsReceived() async throws {
        let gzip = compressed(Self.plain, .gzip)
        let server = try ScriptedServer { _, _ in Self.answer(gzip.prefix(100), coding: "gzip") }
        defer { server.stop() }
        let response = try await withTransport { transport in
            try await transport.send(
                PreparedRequest(
                    method: .get, url: server.baseURL + "/raw", options: http1Options { $0.acceptsCompressedResponses = false }))
        }
        #expect(response.body == gzip.prefix(100))
        #expect(server.requests.first?.values("Accept-Encoding") == [])
    }

    @Test func aDecompressionBombStopsAtTheBodyLimit() async throws {
        let bomb = compressed(Data(count: 64 << 20), .gzip)
        #expect(bomb.count < 100_000, "64 MiB of zeros compress to \(bomb.count) bytes")
        let server = try ScriptedServer { index, _ in index == 0 ? Self.answer(bomb, coding: "gzip") : .ok() }
        defer { server.stop() }
        try await withTransport { transport in
            let error = await #expect(throws: CurlewError.self) {
                _ = try await transport.send(
                    PreparedRequest(
                        method: .get, url: server.baseURL + "/bomb", options: http1Options { $0.maximumBodySize = 1 << 20 }))
            }
            #expect(error?.code == .bodyTooLarge)
            _ = try await transport.send(PreparedRequest(method: .get, url: server.baseURL + "/after", options: http1Options()))
        }
        #expect(server.requests.map(\.connection) == [0, 1], "the aborted connection is not reused")
    }

    // MARK: Streamed and file bodies

    private static func context(for request: PreparedRequest, _ body: ResponseBodyDisposition) -> TransportContext {
        TransportContext(requestName: "CompressedBodyTests", identity: RequestIdentity(request, name: "CompressedBodyTests"), responseBody: body)
    }

    @Test(arguments: [false, true])
    func aStreamedBodyDecodesAcrossPausesAndFailsWhenTruncated(truncated: Bool) async throws {
        // ~1.9 MB decoded: the reader holds back after the first chunk until the transfer paused.
        let plain = compressibleBody(lines: 50_000)
        let gzip = compressed(plain, .gzip)
        let body = truncated ? gzip.dropLast(8) : gzip
        let server = try ScriptedServer { index, _ in index == 0 ? Self.answer(Data(body), coding: "gzip") : .ok() }
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
            var failure: CurlewError?
            do {
                while let chunk = try await iterator.next() { received.append(chunk) }
            } catch let error as CurlewError {
                failure = error
            }
            #expect(transport.statistics.receivePauses > 1)
            if truncated {
                // Only the trailer is missing: every decoded byte arrives, then the error.
                #expect(failure?.code == .protocolError)
                #expect(received == plain)
            } else {
                #expect(failure == nil)
                #expect(received == plain)
            }
            _ = try await transport.send(PreparedRequest(method: .get, url: server.baseURL + "/after", options: http1Options()))
        }
        #expect(server.requests.map(\.connection) == (truncated ? [0, 1] : [0, 0]))
    }

    @Test(arguments: [false, true])
    func aFileBodyIsDecodedOrRemovedWhenTruncated(truncated: Bool) async throws {
        let gzip = compressed(Self.plain, .gzip)
        let body = truncated ? gzip.prefix(gzip.count / 2) : gzip
        let server = try ScriptedServer { _, _ in Self.answer(Data(body), coding: "gzip") }
        defer { server.stop() }
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-gzip-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        try await withTransport { transport in
            let request = PreparedRequest(method: .get, url: server.baseURL + "/file", options: http1Options())
            do {
                let response = try await transport.send(request, context: Self.context(for: request, .file(path: path)))
                #expect(!truncated, "a truncated body came back as \(response.content)")
                #expect(FileManager.default.contents(atPath: path) == Self.plain)
                if case .file(_, let length) = response.content { #expect(length == Int64(Self.plain.count)) }
            } catch let error as CurlewError {
                #expect(truncated, "\(error)")
                #expect(error.code == .protocolError)
                #expect(!FileManager.default.fileExists(atPath: path), "the partial file was removed")
            }
        }
    }
}
