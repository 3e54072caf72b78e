public import Foundation
public import HTTPTypes

/// A decoded value together with the response it came from.
public struct APIResponse<Value: Sendable>: Sendable {
    /// The decoded value.
    public var value: Value
    /// The response status.
    public var status: HTTPResponse.Status {
        get { response.status }
        set { response.status = newValue }
    }
    /// The response headers.
    public var headers: HTTPFields {
        get { response.headers }
        set { response.headers = newValue }
    }
    /// The headers, possibly still the transport's raw block (parsed on first read).
    var headerFields: LazyHeaderFields {
        get { response.headerFields }
        set { response.headerFields = newValue }
    }
    /// The raw body bytes, kept beside the decoded value.
    public var body: Data {
        get { response.body }
        set { response.body = newValue }
    }
    /// The URL that produced the response (after redirects).
    public var url: String {
        get { response.url }
        set { response.url = newValue }
    }
    /// Where the response came from.
    public var source: ResponseSource {
        get { response.source }
        set { response.source = newValue }
    }
    /// The envelope's business code on success (``Endpoint/envelope``), `nil` without envelope.
    public var businessCode: String? {
        get { response.businessCode }
        set { response.businessCode = newValue }
    }
    /// The envelope's message on success; `nil` when the body carries none.
    public var businessMessage: String? {
        get { response.businessMessage }
        set { response.businessMessage = newValue }
    }
    /// libcurl's timings and counters, `nil` when the answer did not come from the network.
    public var metrics: TransferMetrics? {
        get { response.metrics }
        set { response.metrics = newValue }
    }

    /// The response the value was decoded from, shared, not copied: ``RawResponse`` keeps its
    /// fields in one copy-on-write box, so making an `APIResponse` is one reference count
    /// instead of a copy of every field (and destroying it, one release). A setter above copies
    /// the box only when it is shared.
    private var response: RawResponse

    /// Creates a response from a decoded value and the raw response it came from.
    public init(value: Value, raw: RawResponse) {
        self.value = value
        self.response = raw
    }

    /// The response as a ``RawResponse`` (status, headers, body, URL, source, business fields, metrics).
    public var raw: RawResponse {
        // A body that was streamed or written to a file reads as empty, as ``body`` does.
        if case .data = response.content { return response }
        var raw = response
        raw.content = .data(Data())
        return raw
    }
}

/// Where a response came from. A struct so later sources (cache, mock) can be added.
public struct ResponseSource: Sendable, Hashable, CustomStringConvertible {
    /// The kind of source: `network`, `mock`, and what capabilities add (`cache`…).
    public let name: String
    /// The detail and the storage date, rarely set, behind one reference.
    private var extra: Extra?

    /// More about this answer: the fixture's name, the cache entry's key… Not part of equality,
    /// so `source == .mock` holds for every fixture.
    public var detail: String? {
        get { extra?.detail }
        set { extra = Extra.make(detail: newValue, storedAt: storedAt) }
    }
    /// When the answer was stored, for stored answers.
    public var storedAt: Date? {
        get { extra?.storedAt }
        set { extra = Extra.make(detail: detail, storedAt: newValue) }
    }

    /// Creates a source kind; capabilities declare theirs as static members.
    public init(_ name: String, detail: String? = nil, storedAt: Date? = nil) {
        self.name = name
        self.extra = Extra.make(detail: detail, storedAt: storedAt)
    }

    /// Immutable, shared between copies.
    private final class Extra: Sendable {
        let detail: String?
        let storedAt: Date?
        init(detail: String?, storedAt: Date?) {
            self.detail = detail
            self.storedAt = storedAt
        }
        static func make(detail: String?, storedAt: Date?) -> Extra? {
            detail == nil && storedAt == nil ? nil : Extra(detail: detail, storedAt: storedAt)
        }
    }

    /// Received from the network just now.
    public static let network = ResponseSource("network")
    /// Produced by a mock transport or fixture.
    public static let mock = ResponseSource("mock")

    /// The same kind of source with a detail.
    public func with(detail: String?, storedAt: Date? = nil) -> ResponseSource {
        ResponseSource(name, detail: detail, storedAt: storedAt)
    }

    /// How old a stored answer is, `nil` for live ones.
    public var age: TimeInterval? { storedAt.map { Date().timeIntervalSince($0) } }

    /// Sources are equal when their kinds are.
    public static func == (lhs: ResponseSource, rhs: ResponseSource) -> Bool { lhs.name == rhs.name }
    /// Hashes the kind.
    public func hash(into hasher: inout Hasher) { hasher.combine(name) }

    /// The name, with the detail in parentheses when there is one.
    public var description: String { detail.map { "\(name) (\($0))" } ?? name }
}
