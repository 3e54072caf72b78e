internal import Foundation
#if canImport(Glibc)
    internal import Glibc
#endif

/// Turns a ``MultipartForm`` into a replayable ``/CurlewCore/RequestBodyStream`` with an exact length:
/// validates and escapes every part's header once, stats the files, then streams
/// `--boundary`, headers, bytes (files read in 256 KiB pieces), `--boundary--`.
struct MultipartEncoder: Sendable {
    /// A part ready to send: its header block and where its bytes come from, with their length.
    struct PreparedPart: Sendable {
        var head: Data
        var content: MultipartPart.Content
        var length: Int64
    }

    let parts: [PreparedPart]
    let closing: Data
    let length: Int64

    /// Validates and measures `form`.
    /// - Throws: `.encodingFailed` for a NUL in a name or file name, CR/LF/NUL in a content type or
    ///   a bad boundary; `.fileUnreadable` for a file that is not a readable regular file.
    init(_ form: MultipartForm) throws(CurlewError) {
        let boundary = form.boundary
        guard (1...70).contains(boundary.utf8.count),
            boundary.utf8.allSatisfy({ Self.boundaryBytes.contains($0) })
        else {
            throw CurlewError(code: .encodingFailed, message: "the multipart boundary must be 1…70 letters, digits or '-_.'")
        }
        var prepared: [PreparedPart] = []
        var total: Int64 = 0
        for part in form.parts {
            var head = "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(try Self.escaped(part.name, what: "name"))\""
            if let fileName = part.fileName { head += "; filename=\"\(try Self.escaped(fileName, what: "file name"))\"" }
            head += "\r\n"
            if let contentType = part.contentType {
                guard !contentType.utf8.contains(where: { $0 < 0x20 || $0 == 0x7F }) else {
                    throw CurlewError(code: .encodingFailed, message: "a multipart content type contains CR, LF, NUL or another control character")
                }
                head += "Content-Type: \(contentType)\r\n"
            }
            head += "\r\n"
            let length: Int64
            switch part.content {
            case .data(let data): length = Int64(data.count)
            case .file(let path): length = try Self.fileLength(path)
            }
            let headData = Data(head.utf8)
            prepared.append(PreparedPart(head: headData, content: part.content, length: length))
            total += Int64(headData.count) + length + 2  // CRLF after the content
        }
        closing = Data("--\(boundary)--\r\n".utf8)
        parts = prepared
        length = total + Int64(closing.count)
    }

    /// The body as a replayable stream: each attempt reads the files again from the start.
    var stream: RequestBodyStream {
        let encoder = self
        return RequestBodyStream(length: length) { MultipartChunks(encoder: encoder) }
    }

    /// `"` → `%22`, CR → `%0D`, LF → `%0A` (RFC 7578 §4.2, WHATWG); NUL is refused.
    static func escaped(_ text: String, what: String) throws(CurlewError) -> String {
        guard !text.utf8.contains(0) else {
            throw CurlewError(code: .encodingFailed, message: "a multipart \(what) contains NUL")
        }
        var result = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": result += "%22"
            case "\r": result += "%0D"
            case "\n": result += "%0A"
            default: result.unicodeScalars.append(scalar)
            }
        }
        return result
    }

    private static let boundaryBytes = Set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_.".utf8)

    private static func fileLength(_ path: String) throws(CurlewError) -> Int64 {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, access(path, R_OK) == 0 else {
            throw CurlewError(code: .fileUnreadable, message: "the file to upload is not a readable regular file: \(path)")
        }
        return Int64(info.st_size)
    }
}

/// The chunks of one attempt at sending a multipart body.
struct MultipartChunks: AsyncSequence, Sendable {
    typealias Element = Data
    let encoder: MultipartEncoder

    func makeAsyncIterator() -> Iterator { Iterator(encoder: encoder) }

    /// Walks the parts; holds at most one open file, closed when it is done or the iterator goes.
    struct Iterator: AsyncIteratorProtocol {
        private enum Step {
            case head(Int)
            case body(Int)
            case tail(Int)
            case closing
            case done
        }

        let encoder: MultipartEncoder
        private var step: Step
        private var file: OpenFile?

        init(encoder: MultipartEncoder) {
            self.encoder = encoder
            self.step = encoder.parts.isEmpty ? .closing : .head(0)
        }

        mutating func next() async throws -> Data? {
            while true {
                switch step {
                case .head(let index):
                    step = .body(index)
                    return encoder.parts[index].head
                case .body(let index):
                    let part = encoder.parts[index]
                    switch part.content {
                    case .data(let data):
                        step = .tail(index)
                        if !data.isEmpty { return data }
                    case .file(let path):
                        if file == nil { file = try OpenFile(path: path, length: part.length) }
                        if let chunk = try file?.next() { return chunk }
                        file = nil
                        step = .tail(index)
                    }
                case .tail(let index):
                    step = index + 1 < encoder.parts.count ? .head(index + 1) : .closing
                    return Data("\r\n".utf8)
                case .closing:
                    step = .done
                    return encoder.closing
                case .done:
                    return nil
                }
            }
        }
    }

    /// A file read in pieces, exactly `length` bytes; closed on deinit. A file that is no longer
    /// `length` bytes long fails: shorter when it ends early, longer when its last piece is read.
    final class OpenFile {
        private let descriptor: Int32
        private var remaining: Int64
        private let length: Int64
        private let path: String

        init(path: String, length: Int64) throws(CurlewError) {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else {
                throw CurlewError(code: .fileUnreadable, message: "could not open \(path): \(String(cString: strerror(errno)))")
            }
            remaining = length
            self.length = length
            self.path = path
        }

        deinit { close(descriptor) }

        /// The next piece, `nil` at the end; a file shorter than announced throws, and so does one
        /// longer than announced at its last piece — for an empty file, its first and last call.
        func next() throws(CurlewError) -> Data? {
            guard remaining > 0 else {
                // An empty file's end is its start: one that has bytes by now is refused here.
                if length == 0, let change = FileRequestBody.sizeChange(of: descriptor, announced: 0, path: path) {
                    throw CurlewError(code: .fileUnreadable, message: change)
                }
                return nil
            }
            let wanted = Int(Swift.min(remaining, 256 * 1024))
            var data = Data(count: wanted)
            let count = data.withUnsafeMutableBytes { raw -> Int in
                while true {
                    let result = read(descriptor, raw.baseAddress, wanted)
                    if result < 0, errno == EINTR { continue }
                    return result
                }
            }
            guard count > 0 else {
                throw CurlewError(code: .fileUnreadable, message: "\(path) ended before its announced length")
            }
            remaining -= Int64(count)
            // The last piece: a file that grew since it was measured would be sent cut short.
            if remaining == 0, let change = FileRequestBody.sizeChange(of: descriptor, announced: length, path: path) {
                throw CurlewError(code: .fileUnreadable, message: change)
            }
            if count < wanted { data.removeSubrange(count...) }
            return data
        }
    }
}
