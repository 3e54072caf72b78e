public import Curlew
public import Foundation

extension PreparedRequest {
    /// The whole body, whatever form it was prepared in: bytes, a file (read now) or a stream
    /// (drained now — a replayable stream can still be sent afterwards, a `.once` stream cannot).
    /// Empty when the request has no body.
    /// - Throws: The file's or the stream's error.
    public func bodyBytes() async throws -> Data {
        switch content {
        case nil: return Data()
        case .data(let data): return data
        case .file(let path, _): return try Data(contentsOf: URL(fileURLWithPath: path))
        case .stream(let stream):
            var bytes = Data()
            if let length = stream.length, length > 0, length < Int64(Int32.max) { bytes.reserveCapacity(Int(length)) }
            for try await chunk in stream.makeChunks() { bytes.append(chunk) }
            return bytes
        }
    }

    /// The parts of a `multipart/form-data` body, in order (file parts streamed from disk are
    /// read in full).
    /// - Throws: ``MultipartParseError`` for a body that is not well-formed multipart, or the
    ///   body's read error.
    public func multipartParts() async throws -> [RecordedMultipartPart] {
        try RecordedMultipartPart.parts(of: try await bodyBytes(), contentType: header("Content-Type") ?? "")
    }
}
