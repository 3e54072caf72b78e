public import Foundation
public import HTTPTypes

/// One API endpoint, described once as a value and sent with one line.
///
/// A conforming type is a small `Sendable` struct whose stored properties are the endpoint's
/// inputs; the protocol's requirements say how they go on the wire and what comes back. Every
/// requirement but ``path`` has a default.
///
/// ```swift
/// struct SearchRequest: Request {
///     typealias Response = SearchResults          // any Decodable, or Data, String, EmptyResponse
///     var key: String
///
///     var path: String { "pictures/search" }       // relative to the client's base URL
///     var query: [URLQueryItem] { [URLQueryItem(name: "key", value: key)] }
/// }
///
/// let results = try await client.send(SearchRequest(key: "sunset"))
/// ```
///
/// The ``Client`` turns a request into a ``PreparedRequest`` in one throwing step (building the
/// URL, validating headers, encoding the body), hands it to the transport, checks the status with
/// ``accepts(_:)`` and decodes with ``decode(_:decoder:)``.
public protocol Request: Sendable {
    /// What ``Client/send(_:)`` returns. Any `Decodable` is decoded from JSON; `Data`, `String`
    /// and ``EmptyResponse`` have built-in decoding; anything else implements ``decode(_:decoder:)``.
    associatedtype Response: Sendable

    /// The HTTP method. Default: `GET`.
    var method: HTTPRequest.Method { get }
    /// The path relative to the client's base URL (`"pictures/search"`), or an absolute http(s)
    /// URL. It may carry its own `?query`; characters not allowed in a URL path are
    /// percent-encoded, CR, LF and NUL are rejected.
    var path: String { get }
    /// Query items appended to the URL on any method, percent-encoded per RFC 3986.
    /// Default: none.
    var query: [URLQueryItem] { get }
    /// Extra headers; they override the client's defaults of the same name. Names must be HTTP
    /// tokens and values must not contain CR, LF or NUL, or the send fails with `.invalidHeader`
    /// before anything is sent. Default: none.
    var headers: [String: String] { get }
    /// The body. Default: none.
    var body: RequestBody? { get }

    /// The ``QueueActor`` queue this request waits in, `nil` for none (not limited). A call site
    /// may override it with ``Client/send(_:queue:priority:)``. Default: `nil`.
    var queueName: String? { get }
    /// Where the request stands among waiters of its queue. Default: `.normal`.
    var priority: QueuePriority { get }

    /// Accessories for this request in addition to the client's. Default: none.
    var accessories: [any Accessory] { get }
    /// Whether accessories (the client's and the request's) see this request (LCNetwork's
    /// `invalidAccessory` inverted). Default: `true`.
    var usesAccessories: Bool { get }

    /// Whether a response status counts as success. Default: any 2xx. Widen it to receive, say,
    /// a 404 body as a value instead of an `.unacceptableStatus` error.
    func accepts(_ status: HTTPResponse.Status) -> Bool

    /// A last look at the prepared request before it is sent: adjust timeouts, limits or headers.
    /// Default: no change.
    /// - Throws: Any error, which fails the send before anything reaches the network.
    func willSend(_ request: inout PreparedRequest) throws

    /// Turns an accepted response into ``Response``.
    /// - Parameters:
    ///   - response: Status, headers and body bytes.
    ///   - decoder: The client's configured `JSONDecoder`.
    /// - Throws: Any error; a `DecodingError` becomes a `.decodingFailed` ``CurlewError`` whose
    ///   message names the JSON path, e.g. `data[3].id: expected String, found number`.
    func decode(_ response: RawResponse, decoder: JSONDecoder) throws -> Response
}

extension Request {
    /// `GET`.
    public var method: HTTPRequest.Method { .get }
    /// No query items.
    public var query: [URLQueryItem] { [] }
    /// No extra headers.
    public var headers: [String: String] { [:] }
    /// No body.
    public var body: RequestBody? { nil }
    /// Not queued.
    public var queueName: String? { nil }
    /// Normal priority.
    public var priority: QueuePriority { .normal }
    /// No extra accessories.
    public var accessories: [any Accessory] { [] }
    /// Accessories see the request.
    public var usesAccessories: Bool { true }
    /// Accepts 2xx statuses.
    public func accepts(_ status: HTTPResponse.Status) -> Bool { status.kind == .successful }
    /// Leaves the prepared request unchanged.
    public func willSend(_ request: inout PreparedRequest) throws {}
}

extension Request where Response: Decodable {
    /// Decodes the body as JSON with the client's decoder.
    public func decode(_ response: RawResponse, decoder: JSONDecoder) throws -> Response {
        try decoder.decode(Response.self, from: response.body)
    }
}

extension Request where Response == Data {
    /// Returns the body bytes as they arrived.
    public func decode(_ response: RawResponse, decoder: JSONDecoder) throws -> Data {
        response.body
    }
}

extension Request where Response == String {
    /// Returns the body as UTF-8 text.
    /// - Throws: A `DecodingError.dataCorrupted` if the body is not valid UTF-8.
    public func decode(_ response: RawResponse, decoder: JSONDecoder) throws -> String {
        guard let text = String(validating: response.body, as: UTF8.self) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "the body is not valid UTF-8"))
        }
        return text
    }
}

extension Request where Response == EmptyResponse {
    /// Ignores the body.
    public func decode(_ response: RawResponse, decoder: JSONDecoder) throws -> EmptyResponse {
        EmptyResponse()
    }
}

/// The response of a request that expects no body (`204 No Content`, or a body to ignore).
public struct EmptyResponse: Sendable, Hashable, Decodable {
    /// Creates the empty value.
    public init() {}
}
