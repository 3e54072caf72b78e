internal import CCurlShim

/// `zstd` (RFC 8878, as the HTTP content coding of RFC 9659) with libzstd: one or more frames.
///
/// A frame that needs a window over 8 MiB fails (RFC 9659 §3: the largest window an HTTP
/// recipient must support, and what browsers allow), so a response cannot make Curlew reserve
/// more memory than that per body. So does a frame that is neither a Zstandard frame nor a
/// skippable one: libzstd would also decode the legacy formats of its 0.x releases, which RFC
/// 8878 does not define, and its streaming decoder refuses some of them only when their bytes
/// arrive in pieces.
package final class ZstdDecompressor: ContentDecompressor {
    /// log2 of the largest window a frame may ask for: 8 MiB.
    package static let maximumWindowLog: Int32 = 23

    private let context: OpaquePointer
    /// The magic number of the frame being started, as far as its bytes have arrived; `nil` once
    /// it is known to be a Zstandard or skippable frame.
    private var frameMagic: [UInt8]? = []

    /// `nil` when libzstd cannot make a decoding context.
    package init?() {
        guard let context = ZSTD_createDCtx() else { return nil }
        guard ZSTD_isError(ZSTD_DCtx_setParameter(context, ZSTD_d_windowLogMax, Self.maximumWindowLog)) == 0 else {
            ZSTD_freeDCtx(context)
            return nil
        }
        self.context = context
    }

    deinit { ZSTD_freeDCtx(context) }

    package func decompress(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> DecompressionStep {
        var inBuffer = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
        var outBuffer = ZSTD_outBuffer(dst: output.baseAddress, size: output.count, pos: 0)
        let result = ZSTD_decompressStream(context, &outBuffer, &inBuffer)
        if var magic = frameMagic {
            magic += input.prefix(min(4 - magic.count, inBuffer.pos))
            guard Self.mayStartFrame(magic) else {
                return DecompressionStep(used: inBuffer.pos, produced: 0, outcome: .failure("not a Zstandard frame"))
            }
            frameMagic = magic.count == 4 ? nil : magic
        }
        if ZSTD_isError(result) != 0 {
            let reason = ZSTD_getErrorName(result).map { String(cString: $0) } ?? "zstd error \(result)"
            return DecompressionStep(used: inBuffer.pos, produced: outBuffer.pos, outcome: .failure(reason))
        }
        // 0: a frame is decoded and flushed whole.
        return DecompressionStep(used: inBuffer.pos, produced: outBuffer.pos, outcome: result == 0 ? .end : .progress)
    }

    package func startNextMember() -> Bool {
        // A new frame; the window limit stays (a session reset keeps the parameters).
        frameMagic = []
        return ZSTD_isError(ZSTD_DCtx_reset(context, ZSTD_reset_session_only)) == 0
    }

    /// Whether `bytes` (up to four) begin a Zstandard frame (`28 B5 2F FD`) or a skippable one
    /// (`5x 2A 4D 18`).
    static func mayStartFrame(_ bytes: [UInt8]) -> Bool {
        let zstandard: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]
        let skippable: [UInt8] = [0x50, 0x2A, 0x4D, 0x18]
        let isZstandard = bytes.indices.allSatisfy { bytes[$0] == zstandard[$0] }
        let isSkippable = bytes.indices.allSatisfy { $0 == 0 ? bytes[0] & 0xF0 == 0x50 : bytes[$0] == skippable[$0] }
        return isZstandard || isSkippable
    }
}
