public import Foundation
public import HTTPTypes

/// What a ``Transport`` returns: status, headers and body bytes, whatever the status.
public struct RawResponse: Sendable {
    /// The final status (after redirects).
    public var status: HTTPResponse.Status
    /// The final response's headers.
    public var headers: HTTPFields
    /// The body, decoded if it was compressed.
    public var body: Data
    /// The URL that produced this response (after redirects).
    public var url: String
    /// Where the response came from: `.network` for real transports, `.mock` for mocks.
    public var source: ResponseSource

    /// Creates a raw response.
    public init(status: HTTPResponse.Status, headers: HTTPFields = [:], body: Data = Data(), url: String, source: ResponseSource = .network) {
        self.status = status
        self.headers = headers
        self.body = body
        self.url = url
        self.source = source
    }
}
