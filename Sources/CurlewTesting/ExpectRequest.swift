public import Curlew
public import HTTPTypes
public import Testing

/// Checks a recorded request in a swift-testing test and records one issue listing every
/// mismatch, with what was expected and what was sent:
///
/// ```
/// request 0 (GET https://api.test/pictures/search?key=fog) does not match:
///   query key: expected "sunset", found "fog"
///   header X-Trace: expected "1", found none
/// ```
///
/// ```swift
/// expectRequest(transport.requests.first, method: .get, path: "/pictures/search",
///               query: ["key": "sunset"], headers: ["X-Trace": "1"])
/// ```
/// - Parameters:
///   - request: The recorded request; `nil` records "no request was sent".
///   - method: The expected method, or `nil` to skip.
///   - path: The expected URL path, or `nil`.
///   - query: Query items that must be present with these values (others may be too).
///   - headers: Headers that must be present with these values.
///   - json: The expected JSON body (compared as values, so key order and spacing do not matter).
///   - form: Form fields that must be present with these values.
///   - label: How the request is named in the message.
///   - sourceLocation: Where the issue is reported.
/// - Returns: Whether everything matched.
@discardableResult
public func expectRequest(
    _ request: PreparedRequest?, method: HTTPRequest.Method? = nil, path: String? = nil, query: [String: String] = [:],
    headers: [String: String] = [:], json: JSONValue? = nil, form: [String: String] = [:], label: String = "request",
    sourceLocation: SourceLocation = #_sourceLocation
) -> Bool {
    guard let request else {
        Issue.record("no \(label) was sent", sourceLocation: sourceLocation)
        return false
    }
    var problems: [String] = []
    func show(_ value: String?) -> String { value.map { "\"\($0)\"" } ?? "none" }
    if let method, request.method != method { problems.append("method: expected \(method), found \(request.method)") }
    if let path, request.path != path { problems.append("path: expected \(show(path)), found \(show(request.path))") }
    let values = request.queryValues
    for (name, value) in query.sorted(by: { $0.key < $1.key }) where values[name] != value {
        problems.append("query \(name): expected \(show(value)), found \(show(values[name]))")
    }
    for (name, value) in headers.sorted(by: { $0.key < $1.key }) where request.header(name) != value {
        problems.append("header \(name): expected \(show(value)), found \(show(request.header(name)))")
    }
    if let json, request.jsonBody != json {
        let found = request.jsonBody.map { String(describing: $0) } ?? "no JSON body"
        problems.append("JSON body: expected \(json), found \(found)")
    }
    let fields = request.formValues
    for (name, value) in form.sorted(by: { $0.key < $1.key }) where fields[name] != value {
        problems.append("form field \(name): expected \(show(value)), found \(show(fields[name]))")
    }
    guard !problems.isEmpty else { return true }
    let message = "\(label) (\(request.method) \(request.url)) does not match:\n  " + problems.joined(separator: "\n  ")
    Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
    return false
}

/// Checks how many requests were recorded, listing them when the count is wrong.
/// - Returns: Whether the count matched.
@discardableResult
public func expectRequestCount(
    _ requests: [PreparedRequest], _ count: Int, sourceLocation: SourceLocation = #_sourceLocation
) -> Bool {
    guard requests.count != count else { return true }
    let list = requests.enumerated().map { "  \($0.offset): \($0.element.method) \($0.element.url)" }.joined(separator: "\n")
    let message = "expected \(count) request(s), found \(requests.count)" + (list.isEmpty ? "" : ":\n" + list)
    Issue.record(Comment(rawValue: message), sourceLocation: sourceLocation)
    return false
}
