/// Decodes a response body's content coding — `gzip`, `deflate`, `br` or `zstd` — on the engine
/// thread, so that the end of the compressed stream is known: a body whose stream did not reach
/// its end is truncated, whatever `Content-Length` or the chunked framing says. (libcurl 7.88
/// decodes when asked to, but reports a stream cut short — even one missing only its gzip
/// trailer — as a complete body.)
///
/// With ``TransferOptions/acceptsCompressedResponses`` Curlew asks for
/// ``acceptEncoding`` and has libcurl hand over the body as received
/// (`CURLOPT_HTTP_CONTENT_DECODING` off); a response without a content coding never creates a
/// decoder, so an uncompressed body costs nothing here. Each coding's library sits behind
/// ``ContentDecompressor`` (``ZlibDecompressor``, ``BrotliDecompressor``,
/// ``ZstdDecompressor``); this type drives it. `gzip` may hold several members (RFC 1952 §2.2)
/// and `zstd` several frames; bytes after the end of any other stream are refused.
///
/// Decoded bytes go to the sink in pieces of at most ``pieceSize`` bytes, so the sink's
/// ``TransferOptions/maximumBodySize`` stops a decompression bomb after one piece too many. A
/// sink that pauses leaves the refused piece here, with how much of libcurl's chunk the
/// decompressor already took: libcurl delivers the same chunk again on resume (with any bytes
/// that arrived meanwhile appended), and decoding continues where it stopped.
///
/// Engine thread only: owned by one ``CurlEasyTransfer``.
package final class ResponseContentDecoder {
    /// The codings Curlew decodes, by their names in `Content-Encoding`.
    package enum Coding: String, CaseIterable {
        case gzip
        case deflate
        case brotli = "br"
        case zstd
    }

    /// The `Accept-Encoding` value Curlew sends: every coding it decodes.
    package static let acceptEncoding = "gzip, deflate, br, zstd"

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
    private let decompressor: any ContentDecompressor
    /// Where the decompressor writes decoded bytes.
    private let output: UnsafeMutableRawBufferPointer
    /// Decoded bytes at the start of `output` that the sink refused (it paused).
    private var pending = 0
    /// Bytes of the chunk libcurl delivers again after a pause that the decompressor already took.
    private var consumedOfChunk = 0
    /// Whether the last compressed stream reached its end (the gzip trailer, the zlib checksum,
    /// the last brotli meta-block, the end of a zstd frame).
    package private(set) var ended = false

    /// The decoder for a final head's content codings (lower-cased, without `identity`).
    package static func choose(for codings: [Substring]) -> Choice {
        guard let first = codings.first else { return .none }
        let coding: Coding
        switch first {
        case "gzip", "x-gzip": coding = .gzip
        case "deflate": coding = .deflate
        case "br": coding = .brotli
        case "zstd": coding = .zstd
        default: return .refuse("the response's content coding \"\(first)\" was not asked for (Curlew accepts \(acceptEncoding))")
        }
        guard codings.count == 1 else {
            return .refuse("the response has more than one content coding (\(codings.joined(separator: ", ")))")
        }
        let decompressor: (any ContentDecompressor)?
        switch coding {
        case .gzip: decompressor = ZlibDecompressor(gzip: true)
        case .deflate: decompressor = ZlibDecompressor(gzip: false)
        case .brotli: decompressor = BrotliDecompressor()
        case .zstd: decompressor = ZstdDecompressor()
        }
        guard let decompressor else {
            return .refuse("Curlew could not start decoding the response's \(coding.rawValue) body")
        }
        return .decode(ResponseContentDecoder(coding: coding, decompressor: decompressor))
    }

    private init(coding: Coding, decompressor: any ContentDecompressor) {
        self.coding = coding
        self.decompressor = decompressor
        self.output = .allocate(byteCount: Self.pieceSize, alignment: 1)
    }

    deinit { output.deallocate() }

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
                // More bytes after the end: another member or frame, or something that is no
                // part of the body.
                guard decompressor.startNextMember() else {
                    return .abort(.protocolError, "the response has bytes after the end of its \(coding.rawValue) stream")
                }
                ended = false
            }
            let available = bytes.count - offset
            let step = decompressor.decompress(UnsafeRawBufferPointer(start: base + offset, count: available), into: output)
            switch step.outcome {
            case .progress:
                break
            case .end:
                ended = true
            case .failure(let reason):
                return .abort(.protocolError, "the response's \(coding.rawValue) body is corrupt: \(reason)")
            }
            offset += step.used
            if step.produced > 0 {
                let decision = sink.receive(UnsafeRawBufferPointer(start: output.baseAddress, count: step.produced))
                switch decision {
                case .proceed:
                    break
                case .pause:
                    pending = step.produced
                    consumedOfChunk = offset
                    return .pause
                case .abort:
                    return decision
                }
            }
            // Done with the chunk once the decompressor took all of it and had room to spare
            // (holds nothing back), or took all of it and has nothing more to give.
            if offset == bytes.count, ended || step.produced < output.count { break }
            if step.used == 0, step.produced == 0, step.outcome != .end {
                guard offset < bytes.count else { break }
                return .abort(.protocolError, "the response's \(coding.rawValue) body could not be decoded")
            }
        }
        return .proceed
    }
}
