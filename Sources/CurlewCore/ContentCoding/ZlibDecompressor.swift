internal import CCurlShim

/// `gzip` (RFC 1952, any number of members) and `deflate` (the zlib format of RFC 9110
/// §8.4.1.2, or raw deflate when the zlib header is missing, as some servers send it) with zlib.
package final class ZlibDecompressor: ContentDecompressor {
    private let isGzip: Bool
    /// zlib's stream; at a fixed address (zlib's state points back at it).
    private let stream: UnsafeMutablePointer<z_stream>
    /// Whether a `deflate` body was retried as raw deflate.
    private var triedRaw = false
    /// The first bytes of a `deflate` stream (at most ``replayLimit``), kept until it is known
    /// whether they carry a zlib header: read as raw deflate instead, the stream starts again
    /// from them, whichever chunks they came in.
    private var head: [UInt8] = []
    /// How far into a `deflate` stream zlib may find it is no zlib stream, for it to be read
    /// again as raw deflate. zlib refuses a missing header after two bytes; a raw stream whose
    /// first two bytes happen to pass as a header fails a little later. The limit is on the
    /// stream, not on how it was cut into chunks, so the outcome never depends on the cuts.
    static let replayLimit = 1024

    /// `nil` when zlib cannot start a stream.
    package init?(gzip: Bool) {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // gzip: a 15-bit window, +16 for the gzip header and trailer; deflate: the zlib wrapper.
        let windowBits: Int32 = gzip ? 15 + 16 : 15
        guard inflateInit2_(stream, windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            return nil
        }
        self.isGzip = gzip
        self.stream = stream
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
    }

    package func decompress(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> DecompressionStep {
        let takenBefore = Int(stream.pointee.total_in)
        let (status, used, produced) = inflate(input, into: output)
        if status == Z_DATA_ERROR, !isGzip, !triedRaw, stream.pointee.total_out == 0, Int(stream.pointee.total_in) <= Self.replayLimit {
            return restartAsRawDeflate(input, into: output, replaying: takenBefore)
        }
        keepHead(input, used: used)
        return step(status, used: used, produced: produced)
    }

    /// No zlib header: the stream is raw deflate. Reads it again from its first byte — the kept
    /// bytes of earlier chunks, then all of `input` — into `output`, which holds nothing yet
    /// (zlib had produced no byte).
    private func restartAsRawDeflate(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer, replaying count: Int) -> DecompressionStep {
        triedRaw = true
        guard inflateReset2(stream, -15) == Z_OK else {
            return DecompressionStep(used: 0, produced: 0, outcome: .failure("zlib could not restart it as raw deflate"))
        }
        let earlier = head.prefix(count)
        head = []
        let replayed = earlier.withUnsafeBytes { inflate($0, into: output) }
        let replay = step(replayed.status, used: 0, produced: replayed.produced)
        guard replay.outcome == .progress else { return replay }
        let (status, used, more) = inflate(input, into: UnsafeMutableRawBufferPointer(rebasing: output[replayed.produced...]))
        return step(status, used: used, produced: replayed.produced + more)
    }

    /// What an `inflate` call's status means.
    private func step(_ status: Int32, used: Int, produced: Int) -> DecompressionStep {
        switch status {
        case Z_OK, Z_BUF_ERROR: return DecompressionStep(used: used, produced: produced, outcome: .progress)
        case Z_STREAM_END: return DecompressionStep(used: used, produced: produced, outcome: .end)
        default:
            let reason = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
            return DecompressionStep(used: used, produced: produced, outcome: .failure(reason))
        }
    }

    /// One `inflate` call: its status, the input bytes it took and the bytes it wrote.
    private func inflate(_ input: UnsafeRawBufferPointer, into output: UnsafeMutableRawBufferPointer) -> (status: Int32, used: Int, produced: Int) {
        stream.pointee.next_in = UnsafeMutablePointer(mutating: input.baseAddress?.assumingMemoryBound(to: Bytef.self))
        stream.pointee.avail_in = uInt(input.count)
        stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
        stream.pointee.avail_out = uInt(output.count)
        let status = CCurlShim.inflate(stream, Z_NO_FLUSH)
        return (status, input.count - Int(stream.pointee.avail_in), output.count - Int(stream.pointee.avail_out))
    }

    /// Keeps the first bytes of a `deflate` stream that may still turn out to be raw deflate.
    private func keepHead(_ input: UnsafeRawBufferPointer, used: Int) {
        guard !isGzip, !triedRaw, head.count < Self.replayLimit, stream.pointee.total_out == 0 else {
            if !head.isEmpty, stream.pointee.total_out > 0 { head = [] }
            return
        }
        head.append(contentsOf: input.prefix(min(used, Self.replayLimit - head.count)))
    }

    package func startNextMember() -> Bool {
        isGzip && inflateReset(stream) == Z_OK
    }
}
