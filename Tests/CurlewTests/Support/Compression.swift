import CCurlShim
import CTestCompression
import Foundation

/// The three formats a `gzip` or `deflate` content coding may carry.
enum CompressionFormat: Sendable {
    /// RFC 1952: header, deflate data, CRC-32 and length (an 8-byte trailer).
    case gzip
    /// RFC 1950 (what `Content-Encoding: deflate` means): 2-byte header, deflate data, Adler-32.
    case zlib
    /// RFC 1951 only, as some servers send `deflate`.
    case raw

    var windowBits: Int32 {
        switch self {
        case .gzip: 15 + 16
        case .zlib: 15
        case .raw: -15
        }
    }
}

/// `data` compressed whole in `format` with zlib (test fixtures).
func compressed(_ data: Data, _ format: CompressionFormat) -> Data {
    var stream = z_stream()
    guard
        deflateInit2_(
            &stream, Z_DEFAULT_COMPRESSION, Z_DEFLATED, format.windowBits, 8, Z_DEFAULT_STRATEGY,
            ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK
    else { return Data() }
    defer { deflateEnd(&stream) }
    var output = Data(count: Int(deflateBound(&stream, uLong(data.count))) + 64)
    let produced = data.withUnsafeBytes { input in
        output.withUnsafeMutableBytes { out -> Int in
            guard let inBase = input.baseAddress, let outBase = out.baseAddress else { return 0 }
            stream.next_in = UnsafeMutablePointer(mutating: inBase.assumingMemoryBound(to: Bytef.self))
            stream.avail_in = uInt(input.count)
            stream.next_out = outBase.assumingMemoryBound(to: Bytef.self)
            stream.avail_out = uInt(out.count)
            guard deflate(&stream, Z_FINISH) == Z_STREAM_END else { return 0 }
            return out.count - Int(stream.avail_out)
        }
    }
    return output.prefix(produced)
}

/// A body that compresses well but not trivially: numbered lines, ~`lines` × 30 bytes.
func compressibleBody(lines: Int = 4000) -> Data {
    Data((0..<lines).map { "line \($0) of the curlew body, \($0 * 7919 % 1000)\n" }.joined().utf8)
}

/// `data` compressed whole as one brotli stream (test fixtures).
func brotliCompressed(_ data: Data, quality: Int32 = 5) -> Data {
    var size = BrotliEncoderMaxCompressedSize(data.count)
    var output = Data(count: max(size, 64))
    size = output.count
    let done = data.withUnsafeBytes { input in
        output.withUnsafeMutableBytes { out -> Bool in
            guard let outBase = out.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
            return BrotliEncoderCompress(
                quality, BROTLI_DEFAULT_WINDOW, BROTLI_MODE_GENERIC, input.count,
                input.baseAddress?.assumingMemoryBound(to: UInt8.self), &size, outBase) == BROTLI_TRUE
        }
    }
    return done ? output.prefix(size) : Data()
}

/// `data` compressed as one zstd frame with a checksum (test fixtures). With `windowLog`, the
/// frame is written as a stream of unknown size, so its header asks for a window of
/// 2^`windowLog` bytes however small `data` is.
func zstdCompressed(_ data: Data, windowLog: Int32? = nil) -> Data {
    guard let context = ZSTD_createCCtx() else { return Data() }
    defer { ZSTD_freeCCtx(context) }
    _ = ZSTD_CCtx_setParameter(context, ZSTD_c_compressionLevel, 3)
    _ = ZSTD_CCtx_setParameter(context, ZSTD_c_checksumFlag, 1)
    if let windowLog { _ = ZSTD_CCtx_setParameter(context, ZSTD_c_windowLog, windowLog) }
    var output = Data(count: ZSTD_compressBound(data.count) + 64)
    let produced = data.withUnsafeBytes { input in
        output.withUnsafeMutableBytes { out -> Int in
            var source = ZSTD_inBuffer(src: input.baseAddress, size: input.count, pos: 0)
            var target = ZSTD_outBuffer(dst: out.baseAddress, size: out.count, pos: 0)
            // `continue` first, so the frame does not learn the size (see `windowLog`).
            if windowLog != nil, ZSTD_isError(ZSTD_compressStream2(context, &target, &source, ZSTD_e_continue)) != 0 { return 0 }
            var remaining = 1
            while remaining != 0 {
                remaining = ZSTD_compressStream2(context, &target, &source, ZSTD_e_end)
                if ZSTD_isError(remaining) != 0 { return 0 }
            }
            return target.pos
        }
    }
    return output.prefix(produced)
}

/// Bytes that do not compress (a fixed seed, so a failure repeats): encoders store them as they
/// are, in blocks that decode to exactly as many bytes as they take.
func incompressibleBody(count: Int) -> Data {
    var generator = SplitMix64(seed: 0x5EED_CAFE)
    var data = Data(count: count)
    for index in 0..<count { data[index] = UInt8(truncatingIfNeeded: generator.next()) }
    return data
}
