internal import CCurlShim

/// `br` (RFC 7932) with the brotli library's decoder: one stream, nothing after its end.
///
/// Its window is at most 16 MiB (the format's limit without the large-window extension, which
/// HTTP does not use).
package final class BrotliDecompressor: ContentDecompressor {
    private let state: OpaquePointer

    /// `nil` when the decoder cannot be made.
    package init?() {
        guard let state = BrotliDecoderCreateInstance(nil, nil, nil) else { return nil }
        self.state = state
    }

    deinit { BrotliDecoderDestroyInstance(state) }

    package func decompress(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> DecompressionStep {
        var availableIn = input.count
        var nextIn = input.baseAddress?.assumingMemoryBound(to: UInt8.self)
        var availableOut = output.count
        var nextOut = output.baseAddress?.assumingMemoryBound(to: UInt8.self)
        let result = BrotliDecoderDecompressStream(state, &availableIn, &nextIn, &availableOut, &nextOut, nil)
        let used = input.count - availableIn
        let produced = output.count - availableOut
        switch result {
        case BROTLI_DECODER_RESULT_SUCCESS:
            return DecompressionStep(used: used, produced: produced, outcome: .end)
        case BROTLI_DECODER_RESULT_NEEDS_MORE_INPUT, BROTLI_DECODER_RESULT_NEEDS_MORE_OUTPUT:
            return DecompressionStep(used: used, produced: produced, outcome: .progress)
        default:
            let code = BrotliDecoderGetErrorCode(state)
            let reason = BrotliDecoderErrorString(code).map { String(cString: $0) } ?? "brotli error \(code.rawValue)"
            return DecompressionStep(used: used, produced: produced, outcome: .failure(reason))
        }
    }

    package func startNextMember() -> Bool { false }
}
