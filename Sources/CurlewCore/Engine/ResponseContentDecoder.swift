internal import CCurlShim

/// Inflates a response body's `gzip` or `deflate` content coding on the engine thread, so that
/// the end of the compressed stream is known: a body whose stream did not reach its end is
/// truncated, whatever `Content-Length` or the chunked framing says. (libcurl 7.88 decodes when
/// asked to, but reports a stream cut short — even one missing only its gzip trailer — as a
/// complete body.)
///
/// With ``TransferOptions/acceptsCompressedResponses`` Curlew asks for `gzip, deflate` and has
/// libcurl hand over the body as received (`CURLOPT_HTTP_CONTENT_DECODING` off); a response
/// without a content coding never creates a decoder, so an uncompressed body costs nothing here.
/// `gzip` may hold several members (RFC 1952 §2.2); `deflate` is the zlib format (RFC 9110
/// §8.4.1.2), or raw deflate when the zlib header is missing, as some servers send it. Bytes
/// after the end of a `deflate` stream, or after a gzip member that are no gzip member, are
/// refused.
///
/// Decoded bytes go to the sink in pieces of at most ``pieceSize`` bytes, so the sink's
/// ``TransferOptions/maximumBodySize`` stops a decompression bomb after one piece too many. A
/// sink that pauses leaves the refused piece here, with how much of libcurl's chunk zlib already
/// took: libcurl delivers the same chunk again on resume (with any bytes that arrived meanwhile
/// appended), and decoding continues where it stopped.
///
/// Engine thread only: owned by one ``CurlEasyTransfer``.
package final class ResponseContentDecoder {
    /// The codings Curlew decodes.
    package enum Coding: String {
        case gzip
        case deflate
    }

    /// What to do with a response's content codings.
    package enum Choice {
        /// No content coding (or only `identity`): the body is passed on as it is.
        case none
        /// Decode with this decoder.
        case decode(ResponseContentDecoder)
        /// A coding Curlew did not ask for, or could not start decoding: fail with this reason.
        case refuse(String)
    }

    /// The largest piece of decoded bytes handed to the sink at once.
    package static let pieceSize = 16_384

    /// The coding being decoded.
    package let coding: Coding
    /// zlib's stream; at a fixed address (zlib's state points back at it).
    private let stream: UnsafeMutablePointer<z_stream>
    /// Where zlib writes decoded bytes.
    private let output: UnsafeMutableRawBufferPointer
    /// Decoded bytes at the start of `output` that the sink refused (it paused).
    private var pending = 0
    /// Bytes of the chunk libcurl delivers again after a pause that zlib already took.
    private var consumedOfChunk = 0
    /// Whether the last compressed stream reached its end (the gzip trailer, the zlib checksum).
    package private(set) var ended = false
    /// Whether a `deflate` body was retried as raw deflate.
    private var triedRaw = false

    /// The decoder for a final head's content codings (lower-cased, without `identity`).
    package static func choose(for codings: [Substring]) -> Choice {
        guard let first = codings.first else { return .none }
        let coding: Coding
        switch first {
        case "gzip", "x-gzip": coding = .gzip
        case "deflate": coding = .deflate
        default: return .refuse("the response's content coding \"\(first)\" was not asked for (Curlew accepts gzip and deflate)")
        }
        guard codings.count == 1 else {
            return .refuse("the response has more than one content coding (\(codings.joined(separator: ", ")))")
        }
        guard let decoder = ResponseContentDecoder(coding: coding) else {
            return .refuse("zlib could not start decoding the response's \(coding.rawValue) body")
        }
        return .decode(decoder)
    }

    private init?(coding: Coding) {
        let stream = UnsafeMutablePointer<z_stream>.allocate(capacity: 1)
        stream.initialize(to: z_stream())
        // gzip: a 15-bit window, +16 for the gzip header and trailer; deflate: the zlib wrapper.
        let windowBits: Int32 = coding == .gzip ? 15 + 16 : 15
        guard inflateInit2_(stream, windowBits, ZLIB_VERSION, Int32(MemoryLayout<z_stream>.size)) == Z_OK else {
            stream.deinitialize(count: 1)
            stream.deallocate()
            return nil
        }
        self.coding = coding
        self.stream = stream
        self.output = .allocate(byteCount: Self.pieceSize, alignment: 1)
    }

    deinit {
        inflateEnd(stream)
        stream.deinitialize(count: 1)
        stream.deallocate()
        output.deallocate()
    }

    /// Decodes one chunk of the body as received and hands the decoded bytes to `sink`.
    /// `.proceed` means the whole chunk was taken; `.pause` that libcurl must deliver it again
    /// on resume; `.abort` carries the sink's reason or a corrupt stream's.
    package func decode(_ bytes: UnsafeRawBufferPointer, into sink: any ResponseBodySink) -> SinkDecision {
        if pending > 0 {
            let decision = sink.receive(UnsafeRawBufferPointer(start: output.baseAddress, count: pending))
            guard case .proceed = decision else { return decision }
            pending = 0
        }
        var offset = consumedOfChunk
        consumedOfChunk = 0
        guard offset <= bytes.count, let base = bytes.baseAddress else {
            return offset == 0 && bytes.isEmpty
                ? .proceed : .abort(.transportFailure, "libcurl delivered a paused chunk of the body differently")
        }
        while true {
            if ended {
                guard offset < bytes.count else { break }
                // More bytes after the end: another gzip member, or something that is no part of
                // the body.
                guard coding == .gzip, inflateReset(stream) == Z_OK else {
                    return .abort(.protocolError, "the response has bytes after the end of its \(coding.rawValue) stream")
                }
                ended = false
            }
            let available = bytes.count - offset
            let takenBefore = Int(stream.pointee.total_in)
            stream.pointee.next_in = UnsafeMutablePointer(mutating: (base + offset).assumingMemoryBound(to: Bytef.self))
            stream.pointee.avail_in = uInt(available)
            stream.pointee.next_out = output.baseAddress?.assumingMemoryBound(to: Bytef.self)
            stream.pointee.avail_out = uInt(output.count)
            let status = inflate(stream, Z_NO_FLUSH)
            let used = available - Int(stream.pointee.avail_in)
            let produced = output.count - Int(stream.pointee.avail_out)
            switch status {
            case Z_OK, Z_BUF_ERROR:
                break
            case Z_STREAM_END:
                ended = true
            case Z_DATA_ERROR where coding == .deflate && !triedRaw && stream.pointee.total_out == 0 && takenBefore <= offset:
                // No zlib header: raw deflate, from the stream's first byte (in this chunk).
                triedRaw = true
                guard inflateReset2(stream, -15) == Z_OK else {
                    return .abort(.protocolError, "zlib could not restart the response's deflate body as raw deflate")
                }
                offset -= takenBefore
                continue
            default:
                let reason = stream.pointee.msg.map { String(cString: $0) } ?? "zlib error \(status)"
                return .abort(.protocolError, "the response's \(coding.rawValue) body is corrupt: \(reason)")
            }
            offset += used
            if produced > 0 {
                let decision = sink.receive(UnsafeRawBufferPointer(start: output.baseAddress, count: produced))
                switch decision {
                case .proceed:
                    break
                case .pause:
                    pending = produced
                    consumedOfChunk = offset
                    return .pause
                case .abort:
                    return decision
                }
            }
            // Done with the chunk once zlib took all of it and had room to spare (holds nothing back).
            if offset == bytes.count, ended || produced < output.count { break }
            if used == 0, produced == 0, status != Z_STREAM_END {
                return .abort(.protocolError, "the response's \(coding.rawValue) body could not be decoded")
            }
        }
        return .proceed
    }
}
