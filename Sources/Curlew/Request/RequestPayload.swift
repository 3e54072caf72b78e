public import Foundation
#if canImport(Glibc)
    internal import Glibc
#endif

/// The body of an ``Endpoint``: raw bytes, text, a JSON-encoded value, URL-encoded form fields,
/// a file or an async stream of chunks.
///
/// ```swift
/// var body: RequestPayload? { .json(NewPicture(title: "Dunes")) }
/// var body: RequestPayload? { .form(["user": "ana", "remember": "1"]) }
/// var body: RequestPayload? { .file(path: "/var/backups/db.tar", contentType: "application/x-tar") }
/// ```
///
/// Files and streams are sent in constant memory. A one-shot stream
/// (``/CurlewCore/RequestBodyStream/once(length:_:)``) is never resent by retry or token refresh.
///
/// Encoding happens when the client prepares the request; an encoding failure is an
/// `.encodingFailed` error and nothing is sent.
public struct RequestPayload: Sendable {
    enum Storage: Sendable {
        case bytes(Data, contentType: String?)
        case json(any Encodable & Sendable)
        case form([URLQueryItem])
        case file(path: String, contentType: String?)
        case stream(RequestBodyStream, contentType: String?)
        case multipart(MultipartForm)
    }

    let storage: Storage

    /// Raw bytes. Without a `contentType` they go out under the client's default `Content-Type`
    /// (``ClientConfiguration/headers``) when it has one, else `application/octet-stream`; a
    /// `contentType` given here beats the client's default, the endpoint's own header beats both.
    public static func data(_ data: Data, contentType: String? = nil) -> RequestPayload {
        RequestPayload(storage: .bytes(data, contentType: contentType))
    }

    /// UTF-8 text.
    public static func text(_ text: String, contentType: String = "text/plain; charset=utf-8") -> RequestPayload {
        RequestPayload(storage: .bytes(Data(text.utf8), contentType: contentType))
    }

    /// A value encoded as JSON with the client's `JSONEncoder` (`application/json`).
    public static func json(_ value: some Encodable & Sendable) -> RequestPayload {
        RequestPayload(storage: .json(value))
    }

    /// Form fields as `application/x-www-form-urlencoded`, in the given order; a `nil` value
    /// sends the bare name.
    public static func form(_ items: [URLQueryItem]) -> RequestPayload {
        RequestPayload(storage: .form(items))
    }

    /// Form fields as `application/x-www-form-urlencoded`, sorted by name so the bytes are stable.
    public static func form(_ fields: [String: String]) -> RequestPayload {
        .form(fields.sorted { $0.key < $1.key }.map { URLQueryItem(name: $0.key, value: $0.value) })
    }

    /// The contents of a regular file, read while sending. The file must exist and be readable
    /// when the request is prepared (its length goes into `Content-Length`), or the send fails
    /// with `.fileUnreadable` before anything is sent. It is sent at the size it has when it is
    /// opened; a file that ends early, or is longer than that when its last bytes are read, fails
    /// the send with `.fileUnreadable` instead of sending a torn copy. A symbolic link is followed.
    /// The content type is chosen as for ``data(_:contentType:)``.
    public static func file(path: String, contentType: String? = nil) -> RequestPayload {
        RequestPayload(storage: .file(path: path, contentType: contentType))
    }

    /// Chunks produced while sending; see ``/CurlewCore/RequestBodyStream``. The content type is
    /// chosen as for ``data(_:contentType:)``.
    public static func stream(_ stream: RequestBodyStream, contentType: String? = nil) -> RequestPayload {
        RequestPayload(storage: .stream(stream, contentType: contentType))
    }

    /// Encodes the body; returns what the transport sends and its content type.
    /// The body and its own content type; `nil` for bytes, a file or a stream given none (the
    /// client's default `Content-Type`, else `application/octet-stream`).
    func encoded(with encoder: JSONEncoder) throws -> (PreparedBody, contentType: String?) {
        switch storage {
        case .bytes(let data, let contentType):
            return (.data(data), contentType)
        case .json(let value):
            return (.data(try encoder.encode(value)), "application/json")
        case .form(let items):
            return (.data(Data(PercentEncoding.formEncoded(items).utf8)), "application/x-www-form-urlencoded")
        case .file(let path, let contentType):
            return (.file(path: path, length: try Self.regularFileLength(path)), contentType)
        case .stream(let stream, let contentType):
            return (.stream(stream), contentType)
        case .multipart(let form):
            return (.stream(try MultipartEncoder(form).stream), form.contentType)
        }
    }

    /// The length of the regular file at `path`, a symbolic link followed (as the engine's
    /// `open` follows it).
    private static func regularFileLength(_ path: String) throws(CurlewError) -> Int64 {
        var info = stat()
        guard stat(path, &info) == 0 else {
            throw CurlewError(code: .fileUnreadable, message: "the file to upload cannot be read: \(path) (\(String(cString: strerror(errno))))")
        }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw CurlewError(code: .fileUnreadable, message: "the file to upload is not a regular file: \(path)")
        }
        guard access(path, R_OK) == 0 else {
            throw CurlewError(code: .fileUnreadable, message: "the file to upload is not readable: \(path)")
        }
        return Int64(info.st_size)
    }
}
