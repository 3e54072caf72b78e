public import Foundation
public import HTTPTypes

/// What a ``Transport`` returns: status, headers and body bytes, whatever the status.
public struct RawResponse: Sendable {
    /// The final status (after redirects).
    public var status: HTTPResponse.Status {
        _read { yield fields.value.status }
        _modify { yield &fields.value.status }
    }
    /// The final response's headers.
    public var headers: HTTPFields {
        get { headerFields.fields }
        set { headerFields.fields = newValue }
    }
    /// The headers, possibly still the transport's raw block (parsed on first read).
    var headerFields: LazyHeaderFields {
        _read { yield fields.value.headerFields }
        _modify { yield &fields.value.headerFields }
    }
    /// The body: collected bytes (the default), a file or a stream.
    public var content: ResponseContent {
        _read { yield fields.value.content }
        _modify { yield &fields.value.content }
    }
    /// The body bytes, decoded if they were compressed; empty when the body is a file or a
    /// stream. Setting it replaces ``content``.
    public var body: Data {
        get {
            if case .data(let data) = content { return data }
            return Data()
        }
        set { content = .data(newValue) }
    }
    /// libcurl's timings and counters, `nil` when the response did not come from the network.
    public var metrics: TransferMetrics? {
        _read { yield fields.value.metrics }
        _modify { yield &fields.value.metrics }
    }
    /// The business code of a checked ``ResponseEnvelope``, `nil` when there is no envelope or it
    /// was not checked yet.
    public var businessCode: String? {
        _read { yield fields.value.businessCode }
        _modify { yield &fields.value.businessCode }
    }
    /// The envelope's message, when the envelope names one and the body carries it; `nil` when
    /// the body has none (absent or `null`).
    public var businessMessage: String? {
        _read { yield fields.value.businessMessage }
        _modify { yield &fields.value.businessMessage }
    }
    /// The URL that produced this response (after redirects).
    public var url: String {
        _read { yield fields.value.url }
        _modify { yield &fields.value.url }
    }
    /// Where the response came from: `.network` for real transports, `.mock` for mocks.
    public var source: ResponseSource {
        _read { yield fields.value.source }
        _modify { yield &fields.value.source }
    }

    /// The fields behind one reference (a response is copied through every layer on its way out).
    private var fields: CopyOnWriteBox<Fields>

    private struct Fields: Sendable {
        var status: HTTPResponse.Status
        var headerFields: LazyHeaderFields
        var content: ResponseContent
        var metrics: TransferMetrics?
        var businessCode: String?
        var businessMessage: String?
        var url: String
        var source: ResponseSource
    }

    /// Creates a raw response.
    public init(status: HTTPResponse.Status, headers: HTTPFields = [:], body: Data = Data(), url: String, source: ResponseSource = .network) {
        self.init(status: status, headers: headers, content: .data(body), url: url, source: source)
    }

    /// Creates a raw response with a body of any kind.
    public init(status: HTTPResponse.Status, headers: HTTPFields = [:], content: ResponseContent, url: String, source: ResponseSource = .network, metrics: TransferMetrics? = nil) {
        self.init(status: status, headerFields: LazyHeaderFields(headers), content: content, url: url, source: source, metrics: metrics)
    }

    /// Creates a raw response whose headers may still be a raw block.
    init(status: HTTPResponse.Status, headerFields: LazyHeaderFields, content: ResponseContent, url: String, source: ResponseSource = .network, metrics: TransferMetrics? = nil) {
        fields = CopyOnWriteBox(
            Fields(
                status: status, headerFields: headerFields, content: content, metrics: metrics,
                businessCode: nil, businessMessage: nil, url: url, source: source))
    }
}
