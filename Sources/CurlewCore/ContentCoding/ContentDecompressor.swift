/// One compression library's decoding stream, as ``ResponseContentDecoder`` drives it: bytes in,
/// decoded bytes out, and whether the compressed stream has reached its end.
///
/// A decompressor knows its library and nothing of libcurl, sinks or pauses; the decoder around
/// it keeps what a pause leaves behind and hands decoded pieces on. Engine thread only.
package protocol ContentDecompressor: AnyObject {
    /// Decodes from the start of `input` into `output`.
    func decompress(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> DecompressionStep

    /// Readies the stream for more bytes after its end: `true` when the coding allows another
    /// member or frame to follow (gzip members, zstd frames), `false` when bytes after the end
    /// are no part of the body.
    func startNextMember() -> Bool
}

/// What one call of ``ContentDecompressor/decompress(_:into:)`` did.
package struct DecompressionStep {
    /// What the stream says after the call.
    package enum Outcome: Equatable {
        /// More input may follow.
        case progress
        /// The compressed stream (or the current member or frame) ended.
        case end
        /// The stream is corrupt, or needs more than the decoder allows; the reason names it.
        case failure(String)
    }

    /// Bytes of the input taken.
    package var used: Int
    /// Decoded bytes written at the start of the output.
    package var produced: Int
    package var outcome: Outcome

    package init(used: Int, produced: Int, outcome: Outcome) {
        self.used = used
        self.produced = produced
        self.outcome = outcome
    }
}
