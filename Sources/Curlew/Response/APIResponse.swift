public import Foundation
public import HTTPTypes

/// A decoded value together with the response it came from.
public struct APIResponse<Value: Sendable>: Sendable {
    /// The decoded value.
    public var value: Value
    /// The response status.
    public var status: HTTPResponse.Status
    /// The response headers.
    public var headers: HTTPFields
    /// The raw body bytes, kept beside the decoded value.
    public var body: Data
    /// The URL that produced the response (after redirects).
    public var url: String
    /// Where the response came from.
    public var source: ResponseSource
    /// The envelope's business code on success (``Endpoint/envelope``), `nil` without envelope.
    public var businessCode: String?
    /// The envelope's message on success (HttpManager shows its `n` on every response).
    public var businessMessage: String?
    /// libcurl's timings and counters, `nil` when the answer did not come from the network.
    public var metrics: TransferMetrics?

    /// Creates a response from a decoded value and the raw response it came from.
    public init(value: Value, raw: RawResponse) {
        self.value = value
        self.status = raw.status
        self.headers = raw.headers
        self.body = raw.body
        self.url = raw.url
        self.source = raw.source
        self.businessCode = raw.businessCode
        self.businessMessage = raw.businessMessage
        self.metrics = raw.metrics
    }

    /// The response without the decoded value, e.g. to read another part of the body with
    /// ``RawResponse/json(at:)`` (LCNetwork's `rawJSONObject`).
    public var raw: RawResponse {
        var raw = RawResponse(status: status, headers: headers, content: .data(body), url: url, source: source, metrics: metrics)
        raw.businessCode = businessCode
        raw.businessMessage = businessMessage
        return raw
    }
}

/// Where a response came from. A struct so later sources (cache, mock) can be added.
public struct ResponseSource: Sendable, Hashable, CustomStringConvertible {
    private let name: String
    private init(_ name: String) { self.name = name }

    /// Received from the network just now.
    public static let network = ResponseSource("network")
    /// Produced by a mock transport or fixture.
    public static let mock = ResponseSource("mock")

    /// The source's name.
    public var description: String { name }
}
