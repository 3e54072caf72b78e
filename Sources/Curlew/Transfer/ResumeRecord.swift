internal import Foundation
#if canImport(Glibc)
    internal import Glibc
#endif

/// What a resumable download remembers beside its partial file, so it can continue after a
/// failure, a cancellation or a process restart: the URL, the validator for `If-Range`, the
/// complete length, the media type and the suggested file name.
///
/// Stored as a small text file (one field per line; header values cannot contain line breaks),
/// written to a temporary name and renamed, so a crash leaves the old record or the new one.
struct ResumeRecord: Sendable, Hashable {
    /// The first line of every record.
    static let magic = "curlew-resume 1"

    /// The request URL the partial file belongs to.
    var url: String
    /// A strong `ETag`, else `Last-Modified`, else empty (then a resume is not attempted).
    var validator: String
    /// The complete length, when the server said.
    var completeLength: Int64?
    /// The `Content-Type` of the answer.
    var contentType: String
    /// The raw `Content-Disposition` of the answer.
    var contentDisposition: String

    /// The validator a response head offers for `If-Range` (RFC 9110 §13.1.5): a strong `ETag`;
    /// `Last-Modified` only when there is no entity tag at all. A weak `ETag` offers none: it
    /// cannot be sent, and a representation that has one must not be ranged by its date either.
    static func validator(etag: String?, lastModified: String?) -> String {
        if let etag, !etag.isEmpty { return etag.hasPrefix("W/") ? "" : etag }
        return lastModified ?? ""
    }

    /// Whether an answer's validators say the resource is not the one `stored` names: a strong
    /// `ETag` stored and another `ETag` answered, or a `Last-Modified` date stored and another
    /// date answered. A server that ignores `If-Range` sends its current version's range; this
    /// keeps it from being appended to the old version's bytes. An answer without the validator
    /// contradicts nothing.
    static func contradicts(_ stored: String, etag: String?, lastModified: String?) -> Bool {
        guard !stored.isEmpty else { return false }
        if isDate(stored) { return lastModified.map { $0 != stored } ?? false }
        return etag.map { $0 != stored } ?? false
    }

    /// Whether a stored validator is a `Last-Modified` date rather than an entity tag: a date has
    /// spaces (`Wed, 21 Oct 2015 07:28:00 GMT`); an entity tag has none, quoted as RFC 9110 asks
    /// or bare as some servers send it (httpbin's `range1024`).
    static func isDate(_ validator: String) -> Bool {
        !validator.hasPrefix("\"") && validator.contains(" ")
    }

    /// The record's text.
    var text: String {
        [Self.magic, url, validator, completeLength.map(String.init) ?? "", contentType, contentDisposition]
            .joined(separator: "\n") + "\n"
    }

    /// Parses a record's text; `nil` when it is not one.
    init?(text: String) {
        // Split on the LF byte: splitting Characters missed a field ending in CR, because CR LF is
        // one Character (a `Content-Disposition` of `a\r` came back as `a\r\n`).
        let lines = text.utf8.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
            .map { String(decoding: $0, as: UTF8.self) }
        guard lines.count >= 6, lines[0] == Self.magic else { return nil }
        url = lines[1]
        validator = lines[2]
        completeLength = Int64(lines[3])
        contentType = lines[4]
        contentDisposition = lines[5]
    }

    /// Creates a record.
    init(url: String, validator: String, completeLength: Int64?, contentType: String, contentDisposition: String) {
        self.url = url
        self.validator = validator
        self.completeLength = completeLength
        self.contentType = contentType
        self.contentDisposition = contentDisposition
    }

    /// Reads the record at `path` (not following a symbolic link); `nil` when absent or invalid.
    static func read(at path: String) -> ResumeRecord? {
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var bytes = [UInt8](repeating: 0, count: 16 * 1024)
        let count = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
        guard count > 0 else { return nil }
        return ResumeRecord(text: String(decoding: bytes.prefix(count), as: UTF8.self))
    }

    /// Writes the record to `path` through a temporary file renamed into place (mode 0600).
    @discardableResult
    func write(to path: String) -> Bool {
        let temporary = path + ".new"
        unlink(temporary)
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        let bytes = Array(text.utf8)
        let written = bytes.withUnsafeBytes { Glibc.write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
        guard written == bytes.count, rename(temporary, path) == 0 else {
            unlink(temporary)
            return false
        }
        return true
    }
}
