public import Foundation

/// A `multipart/form-data` body (RFC 7578): text fields, in-memory parts and file parts streamed
/// from disk, sent with an exact `Content-Length` in constant memory.
///
/// ```swift
/// var form = MultipartForm()
/// form.append(field: "title", value: "Dunes")
/// form.append(fileAt: "/photos/dunes.jpg")                      // name "file", image/jpeg
/// form.append(data: thumbnail, name: "thumb", fileName: "t.png")  // image/png from the name
/// var body: RequestPayload? { .multipart(form) }
/// ```
///
/// A file part's name defaults to `file` and its file name to the path's last component; its
/// content type, when not given, comes from the file name's extension, else `image/jpeg`
/// (a common default). Names and file names are escaped as RFC 7578 and the WHATWG form
/// encoder do (`"` → `%22`, CR → `%0D`, LF → `%0A`), so they cannot add headers; a NUL in a name
/// or a CR, LF or NUL in a content type fails the send with `.encodingFailed` before anything is
/// sent. File sizes are taken when the request is prepared; a file that changes size meanwhile
/// (shorter, or longer when its last piece is read) fails the upload with `.bodyStreamFailed`.
///
/// The body is replayable: retry and token refresh send every part again, files re-read from the
/// start. An endpoint's `@Field`s and ``Endpoint/parameters`` (form-encoded body parameters) join
/// the form as text fields, before the parts appended here.
public struct MultipartForm: Sendable {
    /// The boundary between parts: 32 random alphanumerics after a fixed prefix.
    public var boundary: String
    /// The parts, in order.
    package var parts: [MultipartPart] = []

    /// Creates an empty form with a random boundary.
    public init(boundary: String? = nil) {
        self.boundary = boundary ?? Self.randomBoundary()
    }

    /// Appends a text field.
    public mutating func append(field name: String, value: String) {
        parts.append(MultipartPart(name: name, fileName: nil, contentType: nil, content: .data(Data(value.utf8))))
    }

    /// Appends bytes in memory as a file part.
    public mutating func append(data: Data, name: String = "file", fileName: String, contentType: String? = nil) {
        parts.append(
            MultipartPart(
                name: name, fileName: fileName, contentType: contentType ?? MultipartPart.defaultContentType(forFileName: fileName),
                content: .data(data)))
    }

    /// Appends a file streamed from disk as a file part.
    public mutating func append(fileAt path: String, name: String = "file", fileName: String? = nil, contentType: String? = nil) {
        let fileName = fileName ?? URL(fileURLWithPath: path).lastPathComponent
        parts.append(
            MultipartPart(
                name: name, fileName: fileName, contentType: contentType ?? MultipartPart.defaultContentType(forFileName: fileName),
                content: .file(path: path)))
    }

    /// `multipart/form-data; boundary=…`.
    public var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// A new random boundary.
    static func randomBoundary() -> String {
        let alphabet = Array("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789".utf8)
        var generator = SystemRandomNumberGenerator()
        let random = (0..<32).map { _ in alphabet[Int(generator.next(upperBound: UInt(alphabet.count)))] }
        return "curlew-" + String(decoding: random, as: UTF8.self)
    }
}

extension RequestPayload {
    /// A `multipart/form-data` body; see ``MultipartForm``.
    public static func multipart(_ form: MultipartForm) -> RequestPayload {
        RequestPayload(storage: .multipart(form))
    }

    /// The payload with form-encoded body parameters joined as leading text fields, when the
    /// payload is multipart and the parameters are `application/x-www-form-urlencoded`; `nil`
    /// otherwise.
    func joiningFormParameters(_ body: Data, contentType: String) -> RequestPayload? {
        guard case .multipart(var form) = storage, contentType.hasPrefix("application/x-www-form-urlencoded") else { return nil }
        let fields = QueryString.pairs(String(decoding: body, as: UTF8.self), plusIsSpace: true).map { pair in
            MultipartPart(name: pair.name, fileName: nil, contentType: nil, content: .data(Data(pair.value.utf8)))
        }
        form.parts = fields + form.parts
        return .multipart(form)
    }
}
