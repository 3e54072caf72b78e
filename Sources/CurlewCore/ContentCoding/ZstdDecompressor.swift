internal import CCurlShim

/// `zstd` (RFC 8878, as the HTTP content coding of RFC 9659) with libzstd: one or more frames.
///
/// A frame that needs a window over 8 MiB fails (RFC 9659 §3: the largest window an HTTP
/// recipient must support, and what browsers allow), so a response cannot make Curlew reserve
/// more memory than that per body.
package final class ZstdDecompressor: ContentDecompressor {
    /// log2 of the largest window a frame may ask for: 8 MiB.
    package static let maximumWindowLog: Int32 = 23

    private let context: OpaquePointer

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
        if ZSTD_isError(result) != 0 {
            let reason = ZSTD_getErrorName(result).map { String(cString: $0) } ?? "zstd error \(result)"
            return DecompressionStep(used: inBuffer.pos, produced: outBuffer.pos, outcome: .failure(reason))
        }
        // 0: a frame is decoded and flushed whole.
        return DecompressionStep(used: inBuffer.pos, produced: outBuffer.pos, outcome: result == 0 ? .end : .progress)
    }

    package func startNextMember() -> Bool {
        // A new frame; the window limit stays (a session reset keeps the parameters).
        ZSTD_isError(ZSTD_DCtx_reset(context, ZSTD_reset_session_only)) == 0
    }
}
