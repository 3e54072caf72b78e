public import Foundation
public import HTTPTypes

/// A request after validation: absolute URL, merged headers, encoded body and transfer options.
///
/// The ``APIClient`` makes one from an ``Endpoint`` in a single throwing step; transports and
/// middleware receive it and never re-validate. Its properties are plain values kept behind one
/// copy-on-write reference, so it is `Sendable` and a copy costs one reference count.
public struct PreparedRequest: Sendable {
    /// The HTTP method.
    public var method: HTTPRequest.Method {
        _read { yield fields.value.method }
        _modify { yield &fields.value.method }
    }
    /// The absolute http or https URL, query included, percent-encoded.
    public var url: String {
        _read { yield fields.value.url }
        _modify { yield &fields.value.url }
    }
    /// All headers to send (client defaults merged with the request's).
    public var headers: HTTPFields {
        _read { yield fields.value.headers }
        _modify { yield &fields.value.headers }
    }
    /// The body: bytes, a file or a stream; `nil` for none.
    public var content: PreparedBody? {
        _read { yield fields.value.content }
        _modify { yield &fields.value.content }
    }
    /// The body bytes when the body is in memory; setting it replaces ``content``.
    public var body: Data? {
        get { content?.data }
        set { content = newValue.map(PreparedBody.data) }
    }
    /// Timeouts, limits and protocol choices for this exchange.
    public var options: TransferOptions {
        _read { yield fields.value.options }
        _modify { yield &fields.value.options }
    }
    /// The request as it may appear in errors and logs.
    public var summary: RequestSummary {
        _read { yield fields.value.summary }
        _modify { yield &fields.value.summary }
    }

    /// The fields behind one reference (a request is copied into every layer it passes).
    private var fields: CopyOnWriteBox<Fields>

    private struct Fields: Sendable {
        var method: HTTPRequest.Method
        var url: String
        var headers: HTTPFields
        var content: PreparedBody?
        var options: TransferOptions
        var summary: RequestSummary
    }

    /// Creates a prepared request. Prefer letting the ``APIClient`` prepare requests; this
    /// initializer is for transports, tests and middleware that build requests themselves.
    /// The caller guarantees the URL is absolute http(s) and the headers valid.
    public init(
        method: HTTPRequest.Method,
        url: String,
        headers: HTTPFields = [:],
        body: Data? = nil,
        content: PreparedBody? = nil,
        options: TransferOptions = TransferOptions(),
        secretKeyFragments: Set<String> = RequestSummary.defaultSecretKeyFragments
    ) {
        fields = CopyOnWriteBox(Fields(
            method: method, url: url, headers: headers, content: content ?? body.map(PreparedBody.data), options: options,
            summary: RequestSummary(method: method, url: url, secretKeyFragments: secretKeyFragments)))
    }
}
