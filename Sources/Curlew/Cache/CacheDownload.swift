internal import Foundation
internal import HTTPTypes
#if canImport(Glibc)
    internal import Glibc
#endif

/// How the cache takes part in a download (``APIClient/download(_:to:options:adjust:)``): a stored
/// answer is written to the download's partial file, which the client then moves into place as
/// it does with a network answer; a downloaded file no larger than
/// ``ResponseCache/Configuration/maximumDownloadEntrySize`` is read back and stored.
///
/// Streams (``APIClient/stream(_:highWaterMark:options:)``) and ``ResponseBodyDisposition/file(path:)``
/// bodies are refused instead (``/CurlewCore/CurlewError/Code/cachePolicyConflict``): their bytes go to the
/// caller as they arrive, and the cache stores and serves whole bodies.
enum CacheDownload {
    /// Whether the cache can take part in a call whose body goes where `disposition` says; throws
    /// `.cachePolicyConflict` for a stream or a plain file, before anything is sent.
    static func check(_ disposition: ResponseBodyDisposition, policy: CachePolicy, request: PreparedRequest, name: String) throws(CurlewError) {
        switch disposition.storage {
        case .collect, .download: return
        case .stream, .file:
            var error = CurlewError(
                code: .cachePolicyConflict,
                message: "\(name) asks for the cache policy \(policy), but its body is streamed to the caller; the cache stores and serves whole bodies — use send, response(for:) or download, or set cache = .networkOnly for the stream",
                request: request.summary)
            error.stage = .configuration
            throw error
        }
    }

    /// The download target of a call, if it is a download.
    static func target(_ disposition: ResponseBodyDisposition) -> DownloadTarget? {
        if case .download(let target) = disposition.storage { return target }
        return nil
    }

    /// A stored (or revalidated) answer for a download: its bytes written to the partial file and
    /// the response pointing at it. An answer whose media type the download refuses stays in
    /// memory, so the client fails it with `.unexpectedContentType` exactly as a network answer.
    /// - Throws: `.fileNotWritable` when the partial file cannot be created or written.
    static func materialize(_ raw: RawResponse, into target: DownloadTarget, request: PreparedRequest) throws(CurlewError) -> RawResponse {
        guard case .data(let body) = raw.content else { return raw }
        let media = DownloadedFile.mediaType(of: raw.headers[.contentType]).lowercased()
        if !media.isEmpty, target.refusedContentTypes.contains(media) { return raw }
        // A resumable download's partial file is replaced by the whole stored answer.
        let flags =
            target.resumeOffset == nil
            ? O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC
            : O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC
        let descriptor = open(target.path, flags, 0o600)
        guard descriptor >= 0 else {
            throw CurlewError(code: .fileNotWritable, message: "could not open \(target.path): \(String(cString: strerror(errno)))", request: request.summary)
        }
        var info = stat()
        guard fstat(descriptor, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            close(descriptor)
            throw CurlewError(code: .fileNotWritable, message: "\(target.path) is not a regular file", request: request.summary)
        }
        let failure: Int32? = body.withUnsafeBytes { buffer -> Int32? in
            var offset = 0
            while offset < buffer.count {
                let written = write(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                if written < 0 {
                    if errno == EINTR { continue }
                    return errno
                }
                offset += written
            }
            return nil
        }
        close(descriptor)
        if let failure {
            unlink(target.path)
            throw CurlewError(code: .fileNotWritable, message: "could not write \(target.path): \(String(cString: strerror(failure)))", request: request.summary)
        }
        var response = raw
        response.content = .file(path: target.path, length: Int64(body.count))
        return response
    }

    /// The bytes of a downloaded body for storing: the whole file when it has at most `limit`
    /// bytes, `nil` when it is larger or cannot be read (then it is not stored).
    static func storedBody(path: String, length: Int64, limit: Int) -> Data? {
        guard length >= 0, length <= Int64(limit) else { return nil }
        let descriptor = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard descriptor >= 0 else { return nil }
        defer { close(descriptor) }
        var data = Data(count: Int(length))
        let complete = data.withUnsafeMutableBytes { buffer -> Bool in
            var offset = 0
            while offset < buffer.count {
                let got = read(descriptor, buffer.baseAddress.map { $0 + offset }, buffer.count - offset)
                if got < 0, errno == EINTR { continue }
                guard got > 0 else { return false }
                offset += got
            }
            return true
        }
        return complete ? data : nil
    }
}
