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
        #expect(ZstdDecompressor.mayStartFrame([0x28, 0xB5, 0x2F, 0xFD]))
        #expect(ZstdDecompressor.mayStartFrame([0x5E, 0x2A, 0x4D, 0x18]))
        #expect(ZstdDecompressor.mayStartFrame([0x28, 0xB5]))
        #expect(!ZstdDecompressor.mayStartFrame([0x27]))
        #expect(!ZstdDecompressor.mayStartFrame([0x5E, 0x2A, 0x4D, 0x19]))
    }
}
