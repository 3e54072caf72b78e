internal import Foundation
internal import HTTPTypes

/// Puts name/value pairs into a prepared request per a ``ParameterPlacement``: the one mechanism
/// behind the token parameter and common arguments.
enum ParameterPlacer {
    /// The body kinds a parameter can be merged into.
    enum BodyKind { case form, json }

    /// The kind of the request's body, or `nil` when it has none or one parameters cannot join.
    static func bodyKind(of request: PreparedRequest) -> BodyKind? {
        guard request.content?.parameterBytes != nil, let type = request.headers[.contentType]?.lowercased() else { return nil }
        if type.hasPrefix("application/x-www-form-urlencoded") { return .form }
        let mediaType = type.split(separator: ";").first.map { $0.trimmingCharacters(in: .whitespaces) } ?? type
        if mediaType == "application/json" || mediaType.hasSuffix("+json") { return .json }
        return nil
    }

    /// Places `parameters` (sorted by name for a stable wire form).
    static func place(
        _ parameters: [String: String], in request: inout PreparedRequest, at placement: ParameterPlacement,
        existing: ExistingParameterPolicy
    ) throws(CurlewError) {
        guard !parameters.isEmpty else { return }
        try place(sorted: parameters.sorted { $0.key < $1.key }, in: &request, at: placement, existing: existing)
    }

    /// ``place(_:in:at:existing:)`` for parameters already sorted by name.
    static func place(
        sorted items: [(key: String, value: String)], in request: inout PreparedRequest, at placement: ParameterPlacement,
        existing: ExistingParameterPolicy
    ) throws(CurlewError) {
        guard !items.isEmpty else { return }
        switch placement {
        case .query:
            placeInQuery(items, &request, existing: existing)
        case .alongsideParameters:
            if let kind = bodyKind(of: request) { try placeInBody(items, kind: kind, &request, existing: existing) } else { placeInQuery(items, &request, existing: existing) }
        case .body:
            if let kind = bodyKind(of: request) {
                try placeInBody(items, kind: kind, &request, existing: existing)
            } else if request.content == nil {
                request.headers[.contentType] = "application/x-www-form-urlencoded"
                request.body = Data()
                try placeInBody(items, kind: .form, &request, existing: existing)
            } else {
                throw CurlewError(
                    code: .encodingFailed,
                    message: "parameters \(items.map(\.key).joined(separator: ", ")) cannot go into a \(request.headers[.contentType] ?? "raw") body",
                    request: request.summary)
            }
        }
    }

    private static func placeInQuery(_ items: [(key: String, value: String)], _ request: inout PreparedRequest, existing: ExistingParameterPolicy) {
        var url = request.url
        // Byte searches (`memchr`): `String.firstIndex(of: Character)` walks grapheme clusters,
        // and `String.UTF8View.firstIndex(of:)` still goes through the view's index per byte.
        guard let range = url.withUTF8(QueryString.queryRange(in:)) else {
            request.replaceURL(QueryString.appending(items.map { (name: $0.key, value: Optional($0.value)) }, to: url))
            return
        }
        let start = url.utf8.index(url.utf8.startIndex, offsetBy: range.lowerBound - 1)
        let end = url.utf8.index(url.utf8.startIndex, offsetBy: range.upperBound)
        let query = String(url[url.utf8.index(after: start)..<end])
        if existing == .keep, !hasEmptyPair(query) {
            // The common case (common arguments on every call): append what is missing, byte-level,
            // without splitting and re-joining the query — the same bytes `merge` would give.
            let present = Set(QueryString.names(of: url))
            let missing = items.filter { !present.contains($0.key) }
            if !missing.isEmpty { request.replaceURL(QueryString.appending(missing.map { (name: $0.key, value: Optional($0.value)) }, to: url)) }
            return
        }
        let merged = merge(items, into: query, plusIsSpace: false, existing: existing) { PercentEncoding.query($0) }
        request.replaceURL(String(url[..<start]) + (merged.isEmpty ? "" : "?" + merged) + url[end...])
    }

    private static func placeInBody(
        _ items: [(key: String, value: String)], kind: BodyKind, _ request: inout PreparedRequest, existing: ExistingParameterPolicy
    ) throws(CurlewError) {
        let body = request.content?.parameterBytes ?? Data()
        switch kind {
        case .form:
            let merged = merge(items, into: String(decoding: body, as: UTF8.self), plusIsSpace: true, existing: existing) { PercentEncoding.formEncoded($0) }
            request.replaceParameterBytes(Data(merged.utf8))
        case .json:
            var members: [String: JSONValue]
            if body.isEmpty {
                members = [:]
            } else {
                guard case .object(let object)? = try? JSONValue(jsonData: body) else {
                    throw CurlewError(code: .encodingFailed, message: "parameters can only be added to a JSON object body", request: request.summary)
                }
                members = object
            }
            for (name, value) in items where existing == .replace || members[name] == nil { members[name] = .string(value) }
            var writer = JSONWriter(sortedKeys: true)
            writer.write(.object(members))
            request.replaceParameterBytes(writer.data)
        }
    }

    /// Whether a query has an empty pair (`a=1&&b=2`, a leading or trailing `&`), which
    /// ``merge(_:into:plusIsSpace:existing:encode:)`` drops.
    private static func hasEmptyPair(_ query: String) -> Bool {
        var previous = UInt8(ascii: "&")
        for byte in query.utf8 {
            if byte == UInt8(ascii: "&"), previous == UInt8(ascii: "&") { return true }
            previous = byte
        }
        return previous == UInt8(ascii: "&") && !query.isEmpty
    }

    /// `text` (a query or form body) with `items` added, or replacing pairs of the same name.
    /// Pairs that stay keep their original bytes.
    private static func merge(
        _ items: [(key: String, value: String)], into text: String, plusIsSpace: Bool, existing: ExistingParameterPolicy,
        encode: ([URLQueryItem]) -> String
    ) -> String {
        var raw = text.split(separator: "&").map(String.init)
        let present = Set(raw.map { QueryString.pairs($0, plusIsSpace: plusIsSpace).first?.name ?? "" })
        let names = Set(items.map(\.key))
        let added: [(key: String, value: String)]
        switch existing {
        case .keep:
            added = items.filter { !present.contains($0.key) }
        case .replace:
            raw.removeAll { names.contains(QueryString.pairs($0, plusIsSpace: plusIsSpace).first?.name ?? "") }
            added = items
        }
        let encoded = encode(added.map { URLQueryItem(name: $0.key, value: $0.value) })
        if !encoded.isEmpty { raw.append(encoded) }
        return raw.joined(separator: "&")
    }
}
