import Foundation
import FuzzSupport
@testable import CurlewCore

/// Input: one byte choosing the coding (gzip, deflate, br, zstd), one byte seeding how the rest
/// is cut into chunks and where the sink pauses, then the body as received. Decodes it twice —
/// whole in one chunk, and chunk by chunk with pauses (each paused chunk delivered again, as
/// libcurl does) — and checks that no piece handed to the sink exceeds the decoder's piece size,
/// that a refusal in one is a refusal in the other, and that both decode the same bytes (up to
/// where a refused one stopped) and agree on whether the stream ended. The sink stops at 4 MiB as `maximumBodySize`
/// would, so a bomb costs little.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzContentDecoding(_ start: UnsafeRawPointer?, _ count: Int) -> CInt {
    guard let start, count >= 2 else { return 0 }
    let input = UnsafeRawBufferPointer(start: start, count: count)
    let codings: [Substring] = ["gzip", "deflate", "br", "zstd"]
    let coding = codings[Int(input[0]) % codings.count]
    let body = UnsafeRawBufferPointer(rebasing: input[2...])
    let whole = decode(body, coding: coding, seed: nil)
    let chunked = decode(body, coding: coding, seed: UInt64(input[1]))
    // Pieces of other sizes cross the size limit at other bytes, and a refused step hands on
    // nothing of what it decoded: where either way stopped early, the shorter is a prefix.
    let common = min(whole.bytes.count, chunked.bytes.count)
    fuzzCheck(whole.bytes.prefix(common) == chunked.bytes.prefix(common), "\(coding): the decoded bytes differ")
    if whole.tooLarge || chunked.tooLarge { return 0 }
    fuzzCheck(whole.refused == chunked.refused, "\(coding): refused whole \(whole.refused), chunked \(chunked.refused)")
    if whole.refused { return 0 }
    fuzzCheck(whole.bytes == chunked.bytes, "\(coding): whole decoded \(whole.bytes.count) bytes, chunked \(chunked.bytes.count)")
    fuzzCheck(whole.ended == chunked.ended, "\(coding): ended whole \(whole.ended), chunked \(chunked.ended)")
    return 0
}

/// Collects decoded bytes, pausing where the generator says (never twice in a row).
final class FuzzSink: ResponseBodySink {
    var bytes = Data()
    var generator: UInt64?
    var pausedLast = false
    var acceptsMore: Bool { true }
    func expect(contentLength: Int?) {}
    func receive(_ chunk: UnsafeRawBufferPointer) -> SinkDecision {
        fuzzCheck(chunk.count <= ResponseContentDecoder.pieceSize, "a piece of \(chunk.count) bytes")
        if var state = generator, !pausedLast {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            generator = state
            if state >> 61 == 0 {
                pausedLast = true
                return .pause
            }
        }
        pausedLast = false
        guard bytes.count + chunk.count <= 4 << 20 else { return .abort(.bodyTooLarge, "over 4 MiB") }
        bytes.append(contentsOf: chunk)
        return .proceed
    }
    func finish() -> CurlewError? { nil }
    func content() -> ResponseContent { .data(bytes) }
    func fail(_ error: CurlewError) {}
}

/// Decodes `body` whole (`seed` nil) or cut into chunks of 1…64 bytes chosen by `seed`.
func decode(_ body: UnsafeRawBufferPointer, coding: Substring, seed: UInt64?) -> (bytes: Data, ended: Bool, refused: Bool, tooLarge: Bool) {
    guard case .decode(let decoder) = ResponseContentDecoder.choose(for: [coding]) else { return (Data(), false, true, false) }
    let sink = FuzzSink()
    sink.generator = seed
    var offset = 0
    var cutter = seed ?? 0
    while offset < body.count {
        var length = body.count - offset
        if seed != nil {
            cutter = cutter &* 2_862_933_555_777_941_757 &+ 3_037_000_493
            length = min(length, Int(cutter >> 58) + 1)
        }
        let chunk = UnsafeRawBufferPointer(rebasing: body[offset..<(offset + length)])
        var decision = decoder.decode(chunk, into: sink)
        while case .pause = decision { decision = decoder.decode(chunk, into: sink) }
        if case .abort(let code, _) = decision { return (sink.bytes, decoder.ended, true, code == .bodyTooLarge) }
        offset += length
    }
    return (sink.bytes, decoder.ended, false, false)
}

runFuzzer(fuzzContentDecoding)
