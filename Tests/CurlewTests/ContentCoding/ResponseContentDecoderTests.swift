@testable import CurlewCore
import Foundation
import Testing

/// ``ResponseContentDecoder`` fed chunk by chunk as libcurl would, without I/O.
@Suite("Content decoder, chunk by chunk")
struct ResponseContentDecoderTests {
    /// Collects what it receives.
    final class CollectingSink: ResponseBodySink {
        var bytes = Data()
        var acceptsMore: Bool { true }
        func expect(contentLength: Int?) {}
        func receive(_ chunk: UnsafeRawBufferPointer) -> SinkDecision {
            bytes.append(contentsOf: chunk)
            return .proceed
        }
        func finish() -> CurlewError? { nil }
        func content() -> ResponseContent { .data(bytes) }
        func fail(_ error: CurlewError) {}
    }

    /// Feeds `chunks` to a decoder for `coding`; the sink's bytes, whether the stream ended, and
    /// the first refusal.
    static func decode(_ chunks: [Data], coding: Substring) -> (body: Data, ended: Bool, refusal: String?) {
        guard case .decode(let decoder) = ResponseContentDecoder.choose(for: [coding]) else { return (Data(), false, "no decoder") }
        let sink = CollectingSink()
        for chunk in chunks {
            let decision = chunk.withUnsafeBytes { decoder.decode($0, into: sink) }
            if case .abort(_, let reason) = decision { return (sink.bytes, decoder.ended, reason) }
        }
        return (sink.bytes, decoder.ended, nil)
    }

    /// A `deflate` body whose one stored block holds `payload`, written by hand: zlib header,
    /// block header (final, stored; LEN and its complement), the bytes, Adler-32.
    static func storedZlib(_ payload: Data) -> Data {
        let length = UInt16(payload.count)
        var stream = Data([0x78, 0x01, 0x01, UInt8(length & 0xFF), UInt8(length >> 8), UInt8(~length & 0xFF), UInt8(~length >> 8)])
        stream.append(payload)
        var a: UInt32 = 1
        var b: UInt32 = 0
        for byte in payload {
            a = (a + UInt32(byte)) % 65521
            b = (b + a) % 65521
        }
        let adler = (b << 16) | a
        stream.append(contentsOf: [UInt8(adler >> 24), UInt8((adler >> 16) & 0xFF), UInt8((adler >> 8) & 0xFF), UInt8(adler & 0xFF)])
        return stream
    }

    /// A chunk that the decompressor takes whole and that decodes to exactly one full piece:
    /// the decoder asks once more, gets nothing, and goes on with the next chunk.
    @Test func aChunkDecodingToExactlyOnePieceIsTakenWhole() {
        let payload = incompressibleBody(count: 40_000)
        let stream = Self.storedZlib(payload)
        // 7 header bytes, then exactly one piece of stored bytes; the rest in the second chunk.
        let cut = 7 + ResponseContentDecoder.pieceSize
        let result = Self.decode([stream.prefix(cut), stream.dropFirst(cut)], coding: "deflate")
        #expect(result.refusal == nil)
        #expect(result.ended)
        #expect(result.body == payload)
    }

    /// Every cut of a small stream, in each coding: the same bytes, the stream ended.
    @Test(arguments: ["gzip", "deflate", "br", "zstd"] as [Substring])
    func everyTwoChunkCutDecodesTheSameBytes(coding: Substring) {
        let payload = compressibleBody(lines: 40)
        let stream: Data
        switch coding {
        case "gzip": stream = compressed(payload, .gzip)
        case "deflate": stream = compressed(payload, .raw)
        case "br": stream = brotliCompressed(payload)
        default: stream = zstdCompressed(payload)
        }
        var failures: [Int] = []
        for cut in 0...stream.count {
            let result = Self.decode([stream.prefix(cut), stream.dropFirst(cut)], coding: coding)
            if result.refusal != nil || !result.ended || result.body != payload { failures.append(cut) }
        }
        #expect(failures.isEmpty, "cuts that failed: \(failures.prefix(10))")
    }

    /// A stream missing its last byte never ends; one followed by a byte is refused or never ends.
    @Test(arguments: ["gzip", "deflate", "br", "zstd"] as [Substring])
    func aShortStreamNeverEndsAndALongOneIsRefused(coding: Substring) {
        let payload = compressibleBody(lines: 40)
        let stream: Data
        switch coding {
        case "gzip": stream = compressed(payload, .gzip)
        case "deflate": stream = compressed(payload, .zlib)
        case "br": stream = brotliCompressed(payload)
        default: stream = zstdCompressed(payload)
        }
        let short = Self.decode([stream.dropLast(1)], coding: coding)
        #expect(short.refusal == nil)
        #expect(!short.ended)
        // Refused at once, or (gzip: the start of another member) never ended.
        let long = Self.decode([stream + Data([0])], coding: coding)
        #expect(long.refusal != nil || !long.ended)
    }

    /// A frame of libzstd's legacy 0.x formats (magic `27 B5 2F FD`, found by the fuzzer) is not
    /// RFC 8878's: refused whole and byte by byte alike. Zstandard and skippable frames pass.
    @Test func aLegacyZstdFrameIsRefusedHoweverItArrives() {
        let legacy = Data([0x27, 0xB5, 0x2F, 0xFD, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x0E, 0x2A])
        let whole = Self.decode([legacy], coding: "zstd")
        let bytewise = Self.decode(legacy.map { Data([$0]) }, coding: "zstd")
        #expect(whole.refusal != nil)
        #expect(bytewise.refusal != nil)
        #expect(whole.body.isEmpty && bytewise.body.isEmpty)
        #expect(ZstdDecompressor.check(header: [0x28, 0xB5, 0x2F, 0xFD]) == .incomplete)
        #expect(ZstdDecompressor.check(header: [0x5E, 0x2A, 0x4D, 0x18]) == .incomplete)
        #expect(ZstdDecompressor.check(header: [0x28, 0xB5]) == .incomplete)
        #expect(ZstdDecompressor.check(header: [0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x50]) == .accepted)
        #expect(ZstdDecompressor.check(header: [0x27]) != .incomplete)
        #expect(ZstdDecompressor.check(header: [0x5E, 0x2A, 0x4D, 0x19]) != .incomplete)
    }

    /// A frame header asking for a 2⁴⁰-byte window followed by a dictionary ID that reads as the
    /// magic of a legacy frame (found by the fuzzer): libzstd's streaming decoder refused it whole
    /// but, given its first six bytes apart, took the next piece for a legacy frame and decoded on.
    /// Refused both ways, and a header asking for a window over 8 MiB is refused in any cut.
    @Test func aFrameHeaderIsRefusedHoweverItIsCut() {
        let header: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x03, 0xF5, 0x27, 0xB5, 0x2F, 0xFD]
        let rest: [UInt8] = [0x01, 0x00, 0x00, 0x00, 0x00, 0x7A, 0x04, 0x58, 0x6D, 0x01, 0x00, 0xEB, 0x00, 0x0E, 0x2A]
        let body = Data(header + rest)
        // 16 MiB window (exponent 14), then an empty last raw block.
        let wide = Data([0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x70, 0x01, 0x00, 0x00])
        for stream in [body, wide] {
            for cut in 1..<stream.count {
                let decoded = Self.decode([stream.prefix(cut), stream.dropFirst(cut)], coding: "zstd")
                #expect(decoded.refusal != nil, "cut after \(cut) bytes")
                #expect(decoded.body.isEmpty)
            }
            #expect(Self.decode([stream], coding: "zstd").refusal != nil)
        }
        let refusal = Self.decode([wide.prefix(6), wide.dropFirst(6)], coding: "zstd").refusal
        #expect(refusal == "the response's zstd body is corrupt: the frame needs a window of 16777216 bytes (at most 8388608 are allowed)")
        // An 8 MiB window (exponent 13) is the largest accepted.
        let widest = Data([0x28, 0xB5, 0x2F, 0xFD, 0x00, 0x68, 0x01, 0x00, 0x00])
        let accepted = Self.decode([widest.prefix(5), widest.dropFirst(5)], coding: "zstd")
        #expect(accepted.refusal == nil)
        #expect(accepted.ended)
    }
}
