public import Foundation

/// One part of a `multipart/form-data` body a test recorded: what a server would see for it.
///
/// ```swift
/// let parts = try await transport.requests[0].multipartParts()
/// #expect(parts.map(\.name) == ["title", "photo"])
/// #expect(parts[1].filename == "sunset.jpg")
/// ```
///
/// Read a body the loopback server received the same way:
/// `try RecordedMultipartPart.parts(of: serverRequest.body, contentType: serverRequest.headers["content-type"] ?? "")`.
public struct RecordedMultipartPart: Sendable, Equatable {
    /// The part's `name`, with RFC 7578 escapes (`%22`, `%0D`, `%0A`) undone.
    public var name: String
    /// The part's `filename`, when it is a file part (escapes undone).
    public var filename: String?
    /// The part's `Content-Type`, when it declares one.
    public var contentType: String?
    /// Every header of the part, by lower-cased name.
    public var headers: [String: String]
    /// The part's bytes.
    public var body: Data

    /// The bytes as UTF-8 text, `nil` when they are not.
    public var text: String? { String(data: body, encoding: .utf8) }

    /// Creates a part (for comparisons).
    public init(name: String, filename: String? = nil, contentType: String? = nil, headers: [String: String] = [:], body: Data) {
        self.name = name
        self.filename = filename
        self.contentType = contentType
        self.headers = headers
        self.body = body
    }

    /// The parts of a `multipart/form-data` body, in order.
    /// - Parameters:
    ///   - body: The whole body.
    ///   - contentType: The request's `Content-Type`, which names the boundary.
    /// - Throws: ``MultipartParseError`` saying what is malformed.
    public static func parts(of body: Data, contentType: String) throws(MultipartParseError) -> [RecordedMultipartPart] {
        guard let boundary = Self.boundary(in: contentType) else { throw MultipartParseError("no boundary in Content-Type \"\(contentType)\"") }
        let bytes = [UInt8](body)
        let delimiter = Array("--\(boundary)".utf8)
        guard var cursor = Self.find(delimiter, in: bytes, from: 0) else { throw MultipartParseError("the body has no \"--\(boundary)\" line") }
        var parts: [RecordedMultipartPart] = []
        while true {
            cursor += delimiter.count
            if bytes[cursor...].starts(with: Array("--".utf8)) { return parts }
            guard bytes[cursor...].starts(with: Array("\r\n".utf8)) else { throw MultipartParseError("a boundary line does not end with CRLF") }
            cursor += 2
            guard let headEnd = Self.find(Array("\r\n\r\n".utf8), in: bytes, from: cursor) else {
                throw MultipartParseError("part \(parts.count) has no blank line after its headers")
            }
            let headers = try Self.headers(bytes[cursor..<headEnd], part: parts.count)
            let start = headEnd + 4
            guard let next = Self.find(Array("\r\n".utf8) + delimiter, in: bytes, from: start) else {
                throw MultipartParseError("part \(parts.count) is not closed by a boundary")
            }
            parts.append(try Self.part(headers: headers, body: Data(bytes[start..<next]), index: parts.count))
            cursor = next + 2
        }
    }

    private static func part(headers: [String: String], body: Data, index: Int) throws(MultipartParseError) -> RecordedMultipartPart {
        guard let disposition = headers["content-disposition"] else { throw MultipartParseError("part \(index) has no Content-Disposition") }
        let parameters = Self.parameters(disposition)
        guard let name = parameters["name"] else { throw MultipartParseError("part \(index) has no name") }
        return RecordedMultipartPart(
            name: name, filename: parameters["filename"], contentType: headers["content-type"], headers: headers, body: body)
    }

    private static func headers(_ block: ArraySlice<UInt8>, part: Int) throws(MultipartParseError) -> [String: String] {
        guard let text = String(bytes: block, encoding: .utf8) else { throw MultipartParseError("part \(part)'s headers are not UTF-8") }
        var headers: [String: String] = [:]
        for line in text.components(separatedBy: "\r\n") where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { throw MultipartParseError("part \(part) has a header line without a colon") }
            headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        return headers
    }

    /// `form-data; name="a"; filename="b.jpg"` → `["name": "a", "filename": "b.jpg"]`, escapes undone.
    private static func parameters(_ value: String) -> [String: String] {
        var result: [String: String] = [:]
        // Unicode scalars, not Characters: a quote followed by a combining mark (a name starting
        // with U+0618) is one Character, and the quoted value would not be found.
        var rest = Substring(value).unicodeScalars
        while let semicolon = rest.firstIndex(of: ";") {
            rest = rest[rest.index(after: semicolon)...].drop(while: { $0 == " " })
            guard let equals = rest.firstIndex(of: "=") else { break }
            let key = String(rest[..<equals]).lowercased()
            rest = rest[rest.index(after: equals)...]
            var raw: Substring.UnicodeScalarView
            if rest.first == "\"" {
                let body = rest.dropFirst()
                let close = body.firstIndex(of: "\"") ?? body.endIndex
                raw = body[..<close]
                rest = close < body.endIndex ? body[body.index(after: close)...] : body[close...]
            } else {
                let end = rest.firstIndex(of: ";") ?? rest.endIndex
                raw = rest[..<end]
                rest = rest[end...]
            }
            result[key] = Self.unescaped(raw)
        }
        return result
    }

    /// Undoes RFC 7578's `%22`, `%0D`, `%0A` scalar by scalar (a Character-level replace misses
    /// `%22` when a combining mark follows and attaches to the `2`).
    private static func unescaped(_ raw: Substring.UnicodeScalarView) -> String {
        var result = String.UnicodeScalarView()
        var index = raw.startIndex
        while index < raw.endIndex {
            let scalar = raw[index]
            if scalar == "%", let first = raw.index(index, offsetBy: 1, limitedBy: raw.endIndex), first < raw.endIndex,
                let second = raw.index(first, offsetBy: 1, limitedBy: raw.endIndex), second < raw.endIndex
            {
                let code = (raw[first], raw[second])
                let decoded: Unicode.Scalar? =
                    switch code {
                    case ("2", "2"): "\""
                    case ("0", "D"), ("0", "d"): "\r"
                    case ("0", "A"), ("0", "a"): "\n"
                    default: nil
                    }
                if let decoded {
                    result.append(decoded)
                    index = raw.index(after: second)
                    continue
                }
            }
            result.append(scalar)
            index = raw.index(after: index)
        }
        return String(result)
    }

    private static func boundary(in contentType: String) -> String? {
        let parameters = Self.parameters(contentType)
        guard let boundary = parameters["boundary"], !boundary.isEmpty else { return nil }
        return boundary
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard !needle.isEmpty, haystack.count >= needle.count, start <= haystack.count - needle.count else { return nil }
        var index = start
        while index <= haystack.count - needle.count {
            if haystack[index] == needle[0], haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }
}

/// A `multipart/form-data` body that could not be read, and why.
public struct MultipartParseError: Error, Sendable, Equatable, CustomStringConvertible {
    /// What is malformed.
    public var description: String

    /// Creates an error with its explanation.
    public init(_ description: String) {
        self.description = description
    }
}

extension MultipartParseError: LocalizedError {
    /// The ``description``, so `localizedDescription` says what is malformed.
    public var errorDescription: String? { description }
}
