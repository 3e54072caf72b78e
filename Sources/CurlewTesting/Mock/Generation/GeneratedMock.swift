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
    /// `Endpoint.keyPath`, inside its `Endpoint.envelope` with a
    /// success code and the message `"ok"`, changed to meet the envelope's
    /// `ResponseEnvelope.successConditions` (a `msg == nil` condition leaves the message out).
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

    /// `body` placed at `keyPath` and wrapped in `envelope` with a success code and `"ok"`, then
    /// changed to meet the envelope's success conditions.
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
        if let path = JSONKeyPath(envelope.codePath), let code = Self.successCode(of: envelope) {
            wrapped = wrapped.setting(Self.codeValue(code), at: path.components)
        }
        if let messagePath = envelope.messagePath, let path = JSONKeyPath(messagePath) {
            wrapped = wrapped.setting(.string("ok"), at: path.components)
        }
        return try Self.meeting(envelope.successConditions, in: wrapped)
    }

    /// The first success code that the envelope's own conditions on the code path also accept.
    private static func successCode(of envelope: ResponseEnvelope) -> String? {
        let allowed = envelope.successConditions.compactMap { condition -> Set<String>? in
            guard case .oneOf(let path, let values) = condition, path == envelope.codePath else { return nil }
            return values
        }
        let codes = envelope.successCodes.sorted()
        return codes.first { code in allowed.allSatisfy { $0.contains(code) } } ?? codes.first
    }

    /// `body` changed so that it meets every extra success condition of the envelope (e.g.
    /// `msg == nil`): an absent path is removed, a `oneOf` path gets its first value, a `present`
    /// path that is missing or `null` gets `"ok"`.
    private static func meeting(_ conditions: [EnvelopeCondition], in body: JSONValue) throws(CurlewError) -> JSONValue {
        var body = body
        for condition in conditions {
            let pathText: String
            switch condition {
            case .oneOf(let path, _), .absent(let path), .present(let path): pathText = path
            }
            guard let path = JSONKeyPath(pathText) else {
                throw CurlewError(code: .mockGenerationFailed, message: "the envelope condition's path \"\(pathText)\" is malformed")
            }
            switch condition {
            case .oneOf(_, let values):
                guard let value = values.sorted().first else {
                    throw CurlewError(code: .mockGenerationFailed, message: "the envelope condition \"\(condition)\" can never be met")
                }
                if let current = body.value(at: path.components[...]), current == codeValue(value) { continue }
                body = body.setting(codeValue(value), at: path.components)
            case .absent:
                body = body.removing(at: path.components[...])
            case .present:
                if let current = body.value(at: path.components[...]), current != .null { continue }
                body = body.setting(.string("ok"), at: path.components)
            }
        }
        return body
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

    /// The value at `path`, `nil` when a step is missing.
    func value(at path: ArraySlice<JSONKeyPath.Component>) -> JSONValue? {
        guard let first = path.first else { return self }
        switch first {
        case .key(let key): return objectValue?[key]?.value(at: path.dropFirst())
        case .index(let index):
            guard let elements = arrayValue, elements.indices.contains(index) else { return nil }
            return elements[index].value(at: path.dropFirst())
        }
    }

    /// A copy without the object member at `path` (an array element at the end is set to `null`).
    func removing(at path: ArraySlice<JSONKeyPath.Component>) -> JSONValue {
        guard let first = path.first else { return self }
        let rest = path.dropFirst()
        switch first {
        case .key(let key):
            guard var members = objectValue, let member = members[key] else { return self }
            members[key] = rest.isEmpty ? nil : member.removing(at: rest)
            return .object(members)
        case .index(let index):
            guard var elements = arrayValue, elements.indices.contains(index) else { return self }
            elements[index] = rest.isEmpty ? .null : elements[index].removing(at: rest)
            return .array(elements)
        }
    }

    func setting(_ value: JSONValue, at path: [JSONKeyPath.Component]) -> JSONValue {
        setting(value, at: path[...])
    }
}
