public import Foundation
public import HTTPTypes

/// What a ``Transport`` returns: status, headers and body bytes, whatever the status.
public struct RawResponse: Sendable {
    /// The final status (after redirects).
    public var status: HTTPResponse.Status
    /// The final response's headers.
    public var headers: HTTPFields {
        get { headerFields.fields }
        set { headerFields.fields = newValue }
    }
    /// The headers, possibly still the transport's raw block (parsed on first read).
    var headerFields: LazyHeaderFields
    /// The body: collected bytes (the default), a file or a stream.
    public var content: ResponseContent
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
        get { metricsBox?.metrics }
        set { metricsBox = newValue.map(MetricsBox.init) }
    }
    /// The metrics behind one reference: a response is copied several times on its way out, and
    /// the metrics are read rarely.
    private var metricsBox: MetricsBox?
    /// The business code of a checked ``ResponseEnvelope``, `nil` when there is no envelope or it
    /// was not checked yet.
    public var businessCode: String?
    /// The envelope's message (HttpManager's `n`), when the envelope has one.
    public var businessMessage: String?
    /// The URL that produced this response (after redirects).
    public var url: String
    /// Where the response came from: `.network` for real transports, `.mock` for mocks.
    public var source: ResponseSource

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
        self.status = status
        self.headerFields = headerFields
        self.content = content
        self.metricsBox = metrics.map(MetricsBox.init)
        self.url = url
        self.source = source
    }
}

/// Holds a response's ``TransferMetrics`` (immutable, so shared between copies).
final class MetricsBox: Sendable {
    let metrics: TransferMetrics
    init(_ metrics: TransferMetrics) { self.metrics = metrics }
}
