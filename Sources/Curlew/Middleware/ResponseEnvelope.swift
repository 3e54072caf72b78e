/// Where a server's envelope keeps its business code, message and payload, and which codes mean
/// success.
///
/// ```swift
/// // {"code": 0, "msg": "ok", "data": {...}}
/// let envelope = ResponseEnvelope.codeMsgData
/// // {"ok": true, "message": "...", "result": {...}}
/// let other = ResponseEnvelope(codePath: "ok", messagePath: "message", payloadPath: "result", successCodes: ["true"])
/// ```
///
/// Codes are compared as text: the number `0`, the string `"0"` and `0.0` are all `"0"`;
/// booleans are `"true"` / `"false"`.
public struct ResponseEnvelope: Sendable, Hashable {
    /// Key path of the business code, e.g. `"code"` or `"resp.status"`.
    public var codePath: String
    /// Key path of the message shown to users, `nil` when there is none.
    public var messagePath: String?
    /// Key path of the payload the request's ``Endpoint/Response`` is decoded from; `nil` decodes
    /// the whole body.
    public var payloadPath: String?
    /// Codes that mean success.
    public var successCodes: Set<String>
    /// Further conditions a successful response must meet besides a success code, all of them
    /// (e.g. `status == true && msg == nil`); a response that misses one fails with
    /// `.serverError`. Default: none.
    public var successConditions: [EnvelopeCondition] = []
    /// Business codes that publish an app event, successful or not (e.g.
    /// 404 → home screen), with ``ClientEvent/reason`` `"business code <code>"` and the message in
    /// ``ClientEvent/error`` for a failure. Default: none.
    public var codeEvents: [String: ClientEvent.Kind] = [:]

    /// Creates an envelope description.
    public init(
        codePath: String, messagePath: String?, payloadPath: String?, successCodes: Set<String>,
        successConditions: [EnvelopeCondition] = [], codeEvents: [String: ClientEvent.Kind] = [:]
    ) {
        self.codePath = codePath
        self.messagePath = messagePath
        self.payloadPath = payloadPath
        self.successCodes = successCodes
        self.successConditions = successConditions
        self.codeEvents = codeEvents
    }

    /// The same envelope with further success conditions.
    public func requiring(_ conditions: EnvelopeCondition...) -> ResponseEnvelope {
        var copy = self
        copy.successConditions += conditions
        return copy
    }

    /// The same envelope publishing `kind` whenever the business code is `code`.
    public func publishing(_ kind: ClientEvent.Kind, onCode code: String) -> ResponseEnvelope {
        var copy = self
        copy.codeEvents[code] = kind
        return copy
    }

    /// `{"code": 0, "msg": "…", "data": …}`.
    public static let codeMsgData = ResponseEnvelope(codePath: "code", messagePath: "msg", payloadPath: "data", successCodes: ["0"])
    /// `{"ok": true, "message": "…", "result": …}`; `"ok": 1` succeeds too (servers that write
    /// booleans as numbers).
    public static let okMessageResult = ResponseEnvelope(codePath: "ok", messagePath: "message", payloadPath: "result", successCodes: ["true", "1"])
    /// `{"status": 0, "msg": "…", …}` with the payload beside them (the whole body is decoded).
    public static let statusMsg = ResponseEnvelope(codePath: "status", messagePath: "msg", payloadPath: nil, successCodes: ["0"])
    /// The same envelope, checked the same way, but decoded whole: for an endpoint whose
    /// ``Endpoint/Response`` is the envelope itself.
    public var keepingWholeBody: ResponseEnvelope {
        var copy = self
        copy.payloadPath = nil
        return copy
    }

    /// The envelope `{"c": 200, "n": "text to show", "p": …}`, where any `2xx` code is a
    /// success.
    public static let cnp = ResponseEnvelope(
        codePath: "c", messagePath: "n", payloadPath: "p", successCodes: Set((200...299).map { String($0) }))
}
