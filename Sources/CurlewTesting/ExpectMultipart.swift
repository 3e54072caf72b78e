public import Curlew
public import Foundation
public import Testing

/// A file part a test expects in a multipart body.
public struct ExpectedFilePart: Sendable {
    /// The expected `filename`.
    public var filename: String
    /// The expected `Content-Type`, or `nil` to skip.
    public var contentType: String?
    /// The expected bytes, or `nil` to skip.
    public var body: Data?

    /// Creates an expectation for a file part.
    public init(filename: String, contentType: String? = nil, body: Data? = nil) {
        self.filename = filename
        self.contentType = contentType
        self.body = body
    }
}

/// Checks the `multipart/form-data` body of a recorded request and records one issue listing
/// every mismatch:
///
/// ```
/// request 0 (POST https://api.test/photos) multipart body does not match:
///   field title: expected "Sunset", found "Dawn"
///   file photo: expected filename "sunset.jpg", found "IMG_1.jpg"
/// ```
///
/// ```swift
/// await expectMultipart(transport.requests.first, fields: ["title": "Sunset"],
///                       files: ["photo": ExpectedFilePart(filename: "sunset.jpg", contentType: "image/jpeg")])
/// ```
/// - Parameters:
///   - request: The recorded request; `nil` records "no request was sent".
///   - fields: Text parts (no file name) that must be present with these values.
///   - files: File parts by part name.
///   - partCount: The exact number of parts, or `nil` to skip.
///   - label: How the request is named in the message.
///   - sourceLocation: Where the issue is reported.
/// - Returns: Whether everything matched.
@discardableResult
public func expectMultipart(
    _ request: PreparedRequest?, fields: [String: String] = [:], files: [String: ExpectedFilePart] = [:], partCount: Int? = nil,
    label: String = "request", sourceLocation: SourceLocation = #_sourceLocation
) async -> Bool {
    guard let request else {
        Issue.record("no \(label) was sent", sourceLocation: sourceLocation)
        return false
    }
    let parts: [RecordedMultipartPart]
    do {
        parts = try await request.multipartParts()
    } catch {
        Issue.record(Comment(rawValue: "\(label) (\(request.method) \(request.url)) has no readable multipart body: \(error)"), sourceLocation: sourceLocation)
        return false
    }
    var problems: [String] = []
    func show(_ value: String?) -> String { value.map { "\"\($0)\"" } ?? "none" }
    if let partCount, parts.count != partCount {
        problems.append("parts: expected \(partCount), found \(parts.count) (\(parts.map(\.name).joined(separator: ", ")))")
    }
    for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
        let part = parts.first { $0.name == name && $0.filename == nil }
        if part?.text != value { problems.append("field \(name): expected \(show(value)), found \(show(part?.text))") }
    }
    for (name, file) in files.sorted(by: { $0.key < $1.key }) {
        guard let part = parts.first(where: { $0.name == name && $0.filename != nil }) else {
            problems.append("file \(name): expected a file part, found none")
            continue
        }
        if part.filename != file.filename { problems.append("file \(name): expected filename \(show(file.filename)), found \(show(part.filename))") }
        if let type = file.contentType, part.contentType != type {
            problems.append("file \(name): expected Content-Type \(show(type)), found \(show(part.contentType))")
        }
        if let body = file.body, part.body != body {
            problems.append("file \(name): expected \(body.count) bytes, found \(part.body.count) that differ")
        }
    }
    guard !problems.isEmpty else { return true }
    let message = "\(label) (\(request.method) \(request.url)) multipart body does not match:\n  " + problems.joined(separator: "\n  ")
    Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
    return false
}
