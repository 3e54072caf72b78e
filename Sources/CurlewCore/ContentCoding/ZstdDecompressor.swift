internal import CCurlShim

/// `zstd` (RFC 8878, as the HTTP content coding of RFC 9659) with libzstd: one or more frames.
///
/// A frame that needs a window over 8 MiB fails (RFC 9659 §3: the largest window an HTTP
/// recipient must support, and what browsers allow), so a response cannot make Curlew reserve
/// more memory than that per body. So does a frame that is neither a Zstandard frame nor a
/// skippable one.
///
/// Each frame's header is read here, with `ZSTD_getFrameHeader`, before libzstd's streaming
/// decoder sees its last byte, and a header it refuses fails the body. The streaming decoder
/// alone would not do: it also decodes the legacy formats of libzstd's 0.x releases, which RFC
/// 8878 does not define, and when a header it cannot read arrived in pieces it decides whether
/// the *next* piece starts a legacy frame — so the same bytes could fail whole and decode when
/// cut differently.
package final class ZstdDecompressor: ContentDecompressor {
    /// log2 of the largest window a frame may ask for: 8 MiB.
    package static let maximumWindowLog: Int32 = 23

    /// What the header bytes that have arrived say about a frame.
    enum HeaderCheck: Equatable {
        /// Not all of the header has arrived; nothing is wrong with what has.
        case incomplete
        /// The whole header arrived and is accepted.
        case accepted
        /// The frame is refused, for this reason.
        case refused(String)
    }

    private let context: OpaquePointer
    /// The header of the frame being started, as far as its bytes have arrived; `nil` once it
    /// arrived whole and was accepted.
    private var frameHeader: [UInt8]? = []

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
        var headerArrives = false
        if let header = frameHeader {
            let arrived = header + input.prefix(Int(ZSTD_FRAMEHEADERSIZE_MAX) - header.count)
            switch Self.check(header: arrived) {
            case .incomplete: break
            case .accepted: headerArrives = true
            case .refused(let reason): return DecompressionStep(used: 0, produced: 0, outcome: .failure(reason))
            }
        }
        var inBuffer = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
        var outBuffer = ZSTD_outBuffer(dst: output.baseAddress, size: output.count, pos: 0)
        let result = ZSTD_decompressStream(context, &outBuffer, &inBuffer)
        if headerArrives {
            frameHeader = nil
        } else if let header = frameHeader {
            // libzstd keeps a partial header to itself; so does this, to read it whole later.
            frameHeader = header + input.prefix(inBuffer.pos)
        }
        if ZSTD_isError(result) != 0 {
            return DecompressionStep(used: inBuffer.pos, produced: outBuffer.pos, outcome: .failure(Self.errorName(result)))
        }
        // 0: a frame is decoded and flushed whole.
        return DecompressionStep(used: inBuffer.pos, produced: outBuffer.pos, outcome: result == 0 ? .end : .progress)
    }

    package func startNextMember() -> Bool {
        // A new frame; the window limit stays (a session reset keeps the parameters).
        frameHeader = []
        return ZSTD_isError(ZSTD_DCtx_reset(context, ZSTD_reset_session_only)) == 0
    }

    /// libzstd's name for the error code `result`.
    private static func errorName(_ result: Int) -> String {
        ZSTD_getErrorName(result).map { String(cString: $0) } ?? "zstd error \(result)"
    }

    /// Reads the first bytes of a frame: a Zstandard frame (`28 B5 2F FD`) whose header libzstd
    /// accepts and whose window is at most 8 MiB, or a skippable frame (`5x 2A 4D 18`).
    static func check(header bytes: [UInt8]) -> HeaderCheck {
        var header = ZSTD_frameHeader()
        let result = bytes.withUnsafeBytes { ZSTD_getFrameHeader(&header, $0.baseAddress, $0.count) }
        if ZSTD_isError(result) != 0 {
            return .refused(errorName(result))
        }
        // A positive result is the size of the whole header, not all of which has arrived.
        guard result == 0 else { return .incomplete }
        if header.frameType == ZSTD_frame, header.windowSize > 1 << UInt64(maximumWindowLog) {
            return .refused("the frame needs a window of \(header.windowSize) bytes (at most \(1 << maximumWindowLog) are allowed)")
        }
        return .accepted
    }
}
