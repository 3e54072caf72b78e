public import Foundation

extension RawResponse {
    /// Decodes the body, or the part of it at `keyPath`, and validates the result.
    ///
    /// The default ``Endpoint/decode(_:decoder:)`` calls this; a hand-written `decode` can too:
    ///
    /// ```swift
    /// func decode(_ response: RawResponse, decoder: JSONDecoder) throws -> [Media] {
    ///     let envelope = try response.json(at: "resp")
    ///     guard envelope.code == 0 else {
    ///         throw CurlewError.serverError(businessCode: "\(envelope.code?.intValue ?? -1)", message: envelope.msg?.stringValue ?? "")
    ///     }
    ///     return try response.decode([Media].self, at: "resp.data", decoder: decoder)
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - keyPath: Where the value is in a JSON body (`resp.data`, `items[2]`); `nil` for the whole body.
    ///   - format: JSON or property list.
    ///   - decoder: The JSON decoder to use (its strategies apply).
    /// - Throws: ``/CurlewCore/CurlewError`` with code `.decodingFailed` or `.validationFailed` and a
    ///   ``/CurlewCore/CurlewError/dataPath`` from the root of the body.
    public func decode<T: Decodable>(
        _ type: T.Type = T.self, at keyPath: String? = nil, format: ResponseFormat = .json, decoder: JSONDecoder = JSONDecoder()
    ) throws(CurlewError) -> T {
        let value: T
        var prefix = ""
        switch format {
        case .json:
            var slice = body
            if let keyPath {
                guard let parsed = JSONKeyPath(keyPath) else {
                    throw CurlewError(code: .decodingFailed, message: "the key path \"\(keyPath)\" is malformed", dataPath: keyPath)
                }
                slice = try Self.locate(parsed, in: body)
                prefix = parsed.description
            }
            do {
                if T.self == JSONValue.self, JSONValueParser.readsLike(decoder), let parsed = try JSONValue.parsed(slice) as? T {
                    value = parsed
                } else {
                    value = try decoder.decode(T.self, from: slice)
                }
            } catch let error as DecodingError {
                if keyPath == nil, let notJSON = notJSON(error) { throw notJSON }
                throw Self.explain(error, body: slice, prefix: prefix)
            } catch {
                throw CurlewError(code: .decodingFailed, message: "\(error)", dataPath: prefix, underlying: error)
            }
        case .propertyList:
            if let keyPath {
                throw CurlewError(code: .decodingFailed, message: "key paths apply to JSON bodies, not property lists", dataPath: keyPath)
            }
            do {
                value = try PropertyListDecoder().decode(T.self, from: body)
            } catch let error as DecodingError {
                throw Self.explain(error, body: Data(), prefix: "")
            } catch {
                throw CurlewError(code: .decodingFailed, message: "\(error)", underlying: error)
            }
        }
        try Validation.run(value, prefix: prefix)
        return value
    }

    /// The body, or the part at `keyPath`, as a ``JSONValue``.
    /// - Throws: ``/CurlewCore/CurlewError`` `.decodingFailed` when the body is not JSON or the path is absent.
    public func json(at keyPath: String? = nil) throws(CurlewError) -> JSONValue {
        try decode(JSONValue.self, at: keyPath)
    }

    /// This response with its body narrowed to the JSON value at `keyPath` (an envelope's payload).
    func narrowed(to keyPath: String) throws(CurlewError) -> RawResponse {
        guard let parsed = JSONKeyPath(keyPath) else {
            throw CurlewError(code: .decodingFailed, message: "the key path \"\(keyPath)\" is malformed", dataPath: keyPath)
        }
        var narrowed = self
        narrowed.body = try Self.locate(parsed, in: body)
        return narrowed
    }

    private static func locate(_ path: JSONKeyPath, in body: Data) throws(CurlewError) -> Data {
        do {
            let range = try JSONSubtreeScanner.locate(path, in: body)
            return body.subdata(in: (body.startIndex + range.lowerBound)..<(body.startIndex + range.upperBound))
        } catch {
            throw CurlewError(code: .decodingFailed, message: error.message, dataPath: error.path, underlying: error)
        }
    }

    /// A body that is not JSON at all — empty (a `204`, a `200` with nothing), or an HTML error
    /// page — said in those words instead of Foundation's "The given data was not valid JSON.";
    /// `nil` when the body is JSON (then the error is about its content). Runs only on failure.
    private func notJSON(_ error: DecodingError) -> CurlewError? {
        guard case .dataCorrupted(let context) = error, context.codingPath.isEmpty else { return nil }
        let body = self.body
        let found: String
        if body.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0A || $0 == 0x0D }) {
            found = body.isEmpty ? "an empty body" : "a body of only whitespace"
        } else if (try? JSONSerialization.jsonObject(with: body, options: .fragmentsAllowed)) == nil {
            let mediaType = headers[.contentType].flatMap { $0.split(separator: ";", maxSplits: 1).first }?.trimmingCharacters(in: .whitespaces) ?? ""
            found = mediaType.isEmpty ? "a body that is not JSON" : "a body that is not JSON (Content-Type \(mediaType))"
        } else {
            return nil
        }
        return CurlewError(code: .decodingFailed, message: "<root>: expected JSON, found \(found)", dataPath: "", underlying: error)
    }

    private static func explain(_ error: DecodingError, body: Data, prefix: String) -> CurlewError {
        let explained = DecodingFailure(error, body: body, prefix: prefix)
        return CurlewError(code: explained.code, message: explained.message, dataPath: explained.path, underlying: error)
    }
}
