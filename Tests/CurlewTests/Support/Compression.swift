import CCurlShim
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
