package import Foundation

/// One part of a ``MultipartForm``: a text field, bytes in memory, or a file streamed from disk.
package struct MultipartPart: Sendable {
    /// Where a part's bytes come from.
    package enum Content: Sendable {
        /// Bytes in memory (a text field's UTF-8, an in-memory image).
        case data(Data)
        /// A regular file, read while sending (never loaded whole).
        case file(path: String)
    }

    /// The form field name (`name="…"`).
    package var name: String
    /// The file name (`filename="…"`), `nil` for a text field.
    package var fileName: String?
    /// The part's `Content-Type`, `nil` for a text field.
    package var contentType: String?
    /// The bytes.
    package var content: Content

    /// Creates a part.
    package init(name: String, fileName: String?, contentType: String?, content: Content) {
        self.name = name
        self.fileName = fileName
        self.contentType = contentType
        self.content = content
    }

    /// The content type a file part gets when the call names none: from the file name's
    /// extension, else `image/jpeg`.
    package static func defaultContentType(forFileName fileName: String) -> String {
        let ext = fileName.split(separator: ".").count > 1 ? String(fileName.split(separator: ".").last ?? "").lowercased() : ""
        return knownTypes[ext] ?? "image/jpeg"
    }

    private static let knownTypes: [String: String] = [
        "jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "gif": "image/gif", "webp": "image/webp",
        "heic": "image/heic", "svg": "image/svg+xml", "bmp": "image/bmp", "tif": "image/tiff", "tiff": "image/tiff",
        "mp4": "video/mp4", "mov": "video/quicktime", "mp3": "audio/mpeg", "wav": "audio/wav", "m4a": "audio/mp4",
        "pdf": "application/pdf", "zip": "application/zip", "gz": "application/gzip", "tar": "application/x-tar",
        "json": "application/json", "xml": "application/xml", "txt": "text/plain", "csv": "text/csv",
        "html": "text/html", "bin": "application/octet-stream",
    ]
}
