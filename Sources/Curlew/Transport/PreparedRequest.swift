public import Foundation
public import HTTPTypes

/// A request after validation: absolute URL, merged headers, encoded body and transfer options.
///
/// The ``APIClient`` makes one from an ``Endpoint`` in a single throwing step; transports and
/// middleware receive it and never re-validate. Its stored properties are plain values, so it is
/// `Sendable` and cheap to copy.
public struct PreparedRequest: Sendable {
    /// The HTTP method.
    public var method: HTTPRequest.Method
    /// The absolute http or https URL, query included, percent-encoded.
    public var url: String
    /// All headers to send (client defaults merged with the request's).
    public var headers: HTTPFields
    /// The body: bytes, a file or a stream; `nil` for none.
    public var content: PreparedBody?
    /// The body bytes when the body is in memory; setting it replaces ``content``.
    public var body: Data? {
        get { content?.data }
        set { content = newValue.map(PreparedBody.data) }
    }
    /// Timeouts, limits and protocol choices for this exchange.
    public var options: TransferOptions
    /// The request as it may appear in errors and logs.
    public var summary: RequestSummary

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
        self.method = method
        self.url = url
        self.headers = headers
        self.content = content ?? body.map(PreparedBody.data)
        self.options = options
        self.summary = RequestSummary(method: method, url: url, secretKeyFragments: secretKeyFragments)
    }
}
