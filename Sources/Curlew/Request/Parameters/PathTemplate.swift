internal import Foundation

/// Fills the `{name}` placeholders of a request path with `@Path` values, each percent-encoded
/// as a single segment: `/`, `?`, `#`, `%` and every other reserved character are encoded, and a
/// value made only of dots (`.`/`..`) is encoded too, so a value can never change the path.
enum PathTemplate {
    static func resolve(_ template: String, values: ParameterList, encoder: ParameterEncoder) throws(ParameterEncodingError) -> String {
        if values.isEmpty {
            // No @Path values: a `{name}` left in the path would be sent literally.
            if let name = firstPlaceholder(in: template) {
                throw ParameterEncodingError(description: "the path placeholder {\(name)} has no @Path value")
            }
            return template
        }
        var result = ""
        var used = Set<String>()
        var rest = Substring(template)
        while let open = rest.firstIndex(of: "{") {
            guard let close = rest[open...].firstIndex(of: "}") else {
                throw ParameterEncodingError(description: "the path has a \"{\" without a closing \"}\"")
            }
            result += rest[..<open]
            let name = String(rest[rest.index(after: open)..<close])
            guard let value = values[name] else {
                throw ParameterEncodingError(description: "the path placeholder {\(name)} has no @Path value")
            }
            guard let text = try encoder.scalarText(value), !text.isEmpty else {
                throw ParameterEncodingError(description: "the path placeholder {\(name)} has an empty or nil value")
            }
            result += segment(text)
            used.insert(name)
            rest = rest[rest.index(after: close)...]
        }
        result += rest
        if let unused = values.first(where: { !used.contains($0.name) }) {
            throw ParameterEncodingError(description: "@Path \(unused.name) has no {\(unused.name)} placeholder in the path")
        }
        return result
    }

    /// The name of the first `{name}` in `path` (a name of letters, digits and `_`), if any.
    static func firstPlaceholder(in path: String) -> Substring? {
        // Contiguous bytes first (the generic `String.UTF8View` walk costs about 1k per path).
        let hasBrace =
            path.utf8.withContiguousStorageIfAvailable { $0.firstIndex(ofByte: UInt8(ascii: "{")) != nil }
            ?? path.utf8.contains(UInt8(ascii: "{"))
        guard hasBrace else { return nil }
        var rest = Substring(path)
        while let open = rest.firstIndex(of: "{") {
            let after = rest[rest.index(after: open)...]
            guard let close = after.firstIndex(of: "}") else { return nil }
            let name = after[..<close]
            if !name.isEmpty, name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) { return name }
            rest = after
        }
        return nil
    }

    /// One path segment: everything but RFC 3986 unreserved characters is encoded.
    static func segment(_ text: String) -> String {
        if text.allSatisfy({ $0 == "." }) { return String(repeating: "%2E", count: text.count) }
        return PercentEncoding.queryComponent(text)
    }
}
