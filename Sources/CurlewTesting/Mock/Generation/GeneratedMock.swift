public import Curlew
public import Foundation

/// A generated body for one endpoint: its `Endpoint.Response` generated, placed at its
/// `Endpoint.keyPath` and wrapped in its `Endpoint.envelope` with a success code, so the
/// endpoint decodes it unchanged.
struct GeneratedMock: Sendable {
    let typeName: String
    let generator: MockGenerator
    let makeBody: @Sendable (MockGenerator) throws(CurlewError) -> Data

    init<R: Endpoint>(request: R, generator: MockGenerator) where R.Response: Decodable {
        self.typeName = String(describing: R.Response.self)
        self.generator = generator
        self.makeBody = { generator throws(CurlewError) in try generator.body(for: request) }
    }

    func answer() throws(CurlewError) -> MockAnswer {
        MockAnswer(
            headers: [.contentType: "application/json"], body: try makeBody(generator),
            name: "generated \(typeName) seed \(generator.seed)")
    }
}

extension MockGenerator {
    /// A whole response body for `request`: the generated `Endpoint.Response` at the endpoint's
    /// `Endpoint.keyPath`, inside its `Endpoint.envelope` (HAccess's `baseformat`) with a
    /// success code and the message `"ok"`.
    /// - Throws: `.mockGenerationFailed`.
    public func body<R: Endpoint>(for request: R) throws(CurlewError) -> Data where R.Response: Decodable {
        Self.data(try bodyJSON(for: request))
    }

    /// The same body as pretty-printed JSON text with sorted keys, to save as the endpoint's
    /// fixture (`SearchRequest.json`) and edit.
    /// - Throws: `.mockGenerationFailed`.
    public func bodyText<R: Endpoint>(for request: R) throws(CurlewError) -> String where R.Response: Decodable {
        Self.text(try bodyJSON(for: request), pretty: true)
    }

    private func bodyJSON<R: Endpoint>(for request: R) throws(CurlewError) -> JSONValue where R.Response: Decodable {
        try wrap(try json(for: R.Response.self), keyPath: request.keyPath, envelope: request.envelope)
    }

    /// The body for a response type known only at run time (a client-wide generated mode).
    func body(generating type: any Decodable.Type, keyPath: String?, envelope: ResponseEnvelope?) throws(CurlewError) -> Data {
        Self.data(try wrap(try json(forOpened: type), keyPath: keyPath, envelope: envelope))
    }

    private func json<T: Decodable>(forOpened type: T.Type) throws(CurlewError) -> JSONValue {
        try json(for: type)
    }

    /// `body` placed at `keyPath` and wrapped in `envelope` with a success code and `"ok"`.
    private func wrap(_ generated: JSONValue, keyPath: String?, envelope: ResponseEnvelope?) throws(CurlewError) -> JSONValue {
        var body = generated
        if let keyPath {
            guard let path = JSONKeyPath(keyPath) else {
                throw CurlewError(code: .mockGenerationFailed, message: "the key path \"\(keyPath)\" is malformed")
            }
            body = JSONValue.object([:]).setting(body, at: path.components)
        }
        guard let envelope else { return body }
        var wrapped: JSONValue = .object([:])
        if let payloadPath = envelope.payloadPath {
            guard let path = JSONKeyPath(payloadPath) else {
                throw CurlewError(code: .mockGenerationFailed, message: "the envelope's payload path \"\(payloadPath)\" is malformed")
            }
            wrapped = wrapped.setting(body, at: path.components)
        } else {
            wrapped = body
        }
        if let path = JSONKeyPath(envelope.codePath), let code = envelope.successCodes.sorted().first {
            wrapped = wrapped.setting(Self.codeValue(code), at: path.components)
        }
        if let messagePath = envelope.messagePath, let path = JSONKeyPath(messagePath) {
            wrapped = wrapped.setting(.string("ok"), at: path.components)
        }
        return wrapped
    }

    /// A success code as the server would send it: `0` and `200` as numbers, `true` as a bool.
    static func codeValue(_ code: String) -> JSONValue {
        if let number = Int(code) { return .int(number) }
        if code == "true" || code == "false" { return .bool(code == "true") }
        return .string(code)
    }
}

extension JSONValue {
    /// A copy with `value` at `path`, creating objects and arrays on the way (array slots before
    /// an index are filled with copies of the value).
    func setting(_ value: JSONValue, at path: ArraySlice<JSONKeyPath.Component>) -> JSONValue {
        guard let first = path.first else { return value }
        let rest = path.dropFirst()
        switch first {
        case .key(let key):
            var members = objectValue ?? [:]
            members[key] = (members[key] ?? .object([:])).setting(value, at: rest)
            return .object(members)
        case .index(let index):
            var elements = arrayValue ?? []
            let inner = (elements.indices.contains(index) ? elements[index] : .object([:])).setting(value, at: rest)
            while elements.count <= index { elements.append(inner) }
            elements[index] = inner
            return .array(elements)
        }
    }

    func setting(_ value: JSONValue, at path: [JSONKeyPath.Component]) -> JSONValue {
        setting(value, at: path[...])
    }
}
