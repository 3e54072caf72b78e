public import Foundation
public import HTTPTypes

/// One API endpoint, described once as a value and sent with one line.
///
/// A conforming type is a small `Sendable` struct whose stored properties are the endpoint's
/// inputs; the protocol's requirements say how they go on the wire and what comes back. Every
/// requirement but ``path`` has a default.
///
/// ```swift
/// struct SearchRequest: Endpoint {
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
/// Parameters can instead be declared on the properties themselves; the call site does not change
/// (`SearchRequest(key: "sunset")`) and plain stored properties are not parameters:
///
/// ```swift
/// struct SearchRequest: Endpoint {
///     typealias Response = [Media]
///     @Query var searchKey: String                  // ?key=…  (renamed below)
///     @Query("size") var pageSize = 20              // a name in the attribute needs a default
///     @Header("X-Token") var token: String? = nil   // a header, omitted when nil
///     @Path var album: Int                          // fills {album}
///     var retries = 0                               // not a parameter
///
///     static let parameterNames = ["searchKey": "key"]
///     var path: String { "albums/{album}/search" }
///     var keyPath: String? { "resp.data" }          // decode only this part of the body
/// }
/// ```
///
/// ## Lifecycle
///
/// The ``APIClient`` turns an endpoint into a ``/CurlewCore/PreparedRequest`` in one throwing step, then sends it:
///
/// 1. declared parameters and ``parameters`` are collected;
/// 2. the path template is filled, the URL, headers and body are encoded and validated;
/// 3. ``willSend(_:)`` adjusts the prepared request; the ``RequestIdentity`` is taken here;
/// 4. the call's ``options`` (adjusted at the call site) choose the queue, the middleware and the
///    limits; the request goes through the middleware chain (raw request in, raw response out);
/// 5. innermost, after the transport: ``accepts(_:)`` checks the status and the ``envelope``'s
///    business code is checked — failures are thrown, so retry and token refresh see them;
/// 6. after the whole chain, once, on whatever bytes came back: the envelope is unwrapped,
///    ``didReceive(_:)`` looks at the response and ``decode(_:decoder:)`` produces the
///    ``Response`` (validation included);
/// 7. if the call fails at any step (cancellation aside), ``didFail(_:)`` sees the error.
public protocol Endpoint: Sendable {
    /// What ``APIClient/send(_:)`` returns. Any `Decodable` is decoded from JSON; `Data`, `String`
    /// and ``EmptyResponse`` have built-in decoding; anything else implements ``decode(_:decoder:)``.
    associatedtype Response: Sendable

    /// The HTTP method. Default: `GET`.
    var method: HTTPRequest.Method { get }
    /// The path relative to the client's base URL (`"pictures/search"`; a leading `/` changes
    /// nothing: it still goes under the base URL's path), or an absolute http(s) URL. It may carry
    /// its own `?query`; characters not allowed in a URL path are percent-encoded (a `%` that
    /// starts no `%XX` escape too, so `"50%off"` is sent as `50%25off`; an escape stays as it
    /// is), CR, LF and NUL are rejected.
    var path: String { get }
    /// Query items appended to the URL on any method, percent-encoded per RFC 3986.
    /// Default: none.
    var query: [URLQueryItem] { get }
    /// Extra headers; they override the client's defaults of the same name. Names must be HTTP
    /// tokens and values must not contain CR, LF or NUL, or the send fails with `.invalidHeader`
    /// before anything is sent. Default: none.
    var headers: [String: String] { get }
    /// The body. Default: none, or the encoded body parameters (see ``parameterEncoding``).
    var body: RequestPayload? { get }

    /// How this endpoint is sent: queue and priority, login, middleware added or skipped,
    /// accessories, limits, volatile parameters, trusted origins. A call site adjusts a copy
    /// (``APIClient/send(_:options:)``). Default: ``RequestOptions/init(queue:priority:requiresAuthentication:middleware:skippedMiddleware:accessories:usesAccessories:totalTimeout:maximumBodySize:volatileParameters:trustedOrigins:ticket:)``
    /// with no arguments.
    var options: RequestOptions { get }
    /// The envelope this endpoint's responses come in (`{"code": 0, "msg": …, "data": …}`), or
    /// `nil` when the body is the ``Response`` itself. Declare it once for a family of endpoints
    /// in a protocol extension, so ``Response`` means the same thing on every client:
    ///
    /// ```swift
    /// protocol GalleryAPI: Endpoint {}
    /// extension GalleryAPI { var envelope: ResponseEnvelope? { .codeMsgData } }
    /// struct SearchRequest: GalleryAPI { typealias Response = [Picture]; … }      // decodes data
    /// struct RawSearch: GalleryAPI {                                              // whole body
    ///     typealias Response = JSONValue
    ///     var envelope: ResponseEnvelope? { .codeMsgData.keepingWholeBody }
    /// }
    /// ```
    ///
    /// A business code outside ``ResponseEnvelope/successCodes`` fails the call with
    /// `.serverError` (seen by retry and token refresh); on success the code and message travel
    /// beside the value (``APIResponse/businessCode``). Default: `nil`.
    var envelope: ResponseEnvelope? { get }

    /// Extra body parameters as a dictionary, merged with the
    /// `@Field` properties (a declared field of the same name wins) and encoded per
    /// ``parameterEncoding``. Default: none.
    var parameters: [String: ParameterValue] { get }
    /// Wire names for declared parameters, Swift property name → wire name, for
    /// required properties that cannot carry a name in
    /// their attribute. A name in the attribute wins. Default: none.
    static var parameterNames: [String: String] { get }
    /// How body parameters are encoded: `.query`, `.form` or `.json`. Default: `.query` for `GET`,
    /// `HEAD` and `DELETE`, `.form` otherwise. A request with both an explicit ``body`` and body
    /// parameters encoded as `.form` or `.json` fails with `.encodingFailed`.
    var parameterEncoding: ParameterEncoding { get }
    /// How parameter values are written (arrays, booleans, dates, nil, key order).
    /// Default: ``ParameterEncodingOptions/default`` (sorted keys).
    var parameterEncodingOptions: ParameterEncodingOptions { get }

    /// Where in a JSON body the ``Response`` is, e.g. `"resp.data"`, `"data.user.friends"`,
    /// `"items[2]"`. Only that part is decoded; the rest is skipped without building values.
    /// Data-format errors name the full path from the root of the body (`resp.data[3].id`).
    /// Default: `nil`, the whole body.
    var keyPath: String? { get }
    /// Whether a `Decodable` ``Response`` is read from JSON or from a property list.
    /// Default: `.json`.
    var responseFormat: ResponseFormat { get }

    /// Whether a response status counts as success. Default: any 2xx. Widen it to receive, say,
    /// a 404 body as a value instead of an `.unacceptableStatus` error.
    func accepts(_ status: HTTPResponse.Status) -> Bool

    /// A last look at the prepared request before it is sent: adjust timeouts, limits or headers.
    /// Default: no change.
    /// - Throws: Any error, which fails the send before anything reaches the network.
    func willSend(_ request: inout PreparedRequest) throws

    /// A look at the accepted raw response before it is decoded, e.g. to check a business code
    /// in an envelope.
    /// Default: nothing.
    /// - Throws: A ``/CurlewCore/CurlewError`` to choose the failure (for example
    ///   ``/CurlewCore/CurlewError/serverError(businessCode:message:)``); any other error becomes `.serverError`.
    func didReceive(_ response: RawResponse) throws

    /// Called once when the call fails, with the error the caller is about to receive: an
    /// HTTP status, a business code, a transport or
    /// data-format failure, a failure before anything was sent. Not called for cancellation
    /// (`CancellationError`). Observe here; the error is thrown to the caller unchanged.
    /// Default: nothing.
    func didFail(_ error: CurlewError)

    /// Turns an accepted response into ``Response``. Implement it to
    /// decode by hand; ``RawResponse/decode(_:at:format:decoder:)`` and ``RawResponse/json(at:)``
    /// help.
    /// - Parameters:
    ///   - response: Status, headers and body bytes.
    ///   - decoder: The client's configured `JSONDecoder`.
    /// - Throws: Any error; a `DecodingError` becomes a `.decodingFailed` ``/CurlewCore/CurlewError`` whose
    ///   message names the JSON path, e.g. `data[3].id: expected String, found number`; a
    ///   ``/CurlewCore/CurlewError`` is passed on with the request, status and body snippet filled in.
    func decode(_ response: RawResponse, decoder: JSONDecoder) throws -> Response

    // MARK: Removed properties

    // Properties of the endpoint protocol before ``RequestOptions`` took them over. Each is a
    // requirement whose type is an associated type, so that a type still declaring one is caught
    // instead of silently ignored. At compile time: the declaration's type (`String?`, `Bool`,
    // `[any APIMiddleware]`, `Set<MiddlewareKind>`) becomes the associated type through a
    // deprecated conformance to `_RemovedEndpointProperty`, and the compiler warns at the
    // conformance with the deprecation's message ("`queueName` was removed: set `queue` in
    // `options`"). At run time: a call of an endpoint whose value never reaches `options` fails
    // with ``/CurlewCore/CurlewError/Code/removedEndpointProperty`` in a debug build and is logged once in a
    // release build. Never implement them.

    /// Not declared by the endpoint unless it still has the removed `queueName`.
    associatedtype _QueueName: _RemovedEndpointProperty = _EndpointPropertyNotDeclared
    /// Not declared by the endpoint unless it still has the removed `requiresAuthentication`.
    associatedtype _RequiresAuthentication: _RemovedEndpointProperty = _EndpointPropertyNotDeclared
    /// Not declared by the endpoint unless it still has the removed `usesAccessories`.
    associatedtype _UsesAccessories: _RemovedEndpointProperty = _EndpointPropertyNotDeclared
    /// Not declared by the endpoint unless it still has the removed `middleware`.
    associatedtype _Middleware: _RemovedEndpointProperty = _EndpointPropertyNotDeclared
    /// Not declared by the endpoint unless it still has the removed `skippedMiddleware`.
    associatedtype _SkippedMiddleware: _RemovedEndpointProperty = _EndpointPropertyNotDeclared

    /// Removed: set ``RequestOptions/queue`` in ``options``.
    @available(*, deprecated, message: "removed: set `queue` in `options` (RequestOptions)")
    var queueName: _QueueName { get }
    /// Removed: set ``RequestOptions/requiresAuthentication`` in ``options``.
    @available(*, deprecated, message: "removed: set `requiresAuthentication` in `options` (RequestOptions)")
    var requiresAuthentication: _RequiresAuthentication { get }
    /// Removed: set ``RequestOptions/usesAccessories`` in ``options``.
    @available(*, deprecated, message: "removed: set `usesAccessories` in `options` (RequestOptions)")
    var usesAccessories: _UsesAccessories { get }
    /// Removed: set ``RequestOptions/middleware`` in ``options``.
    @available(*, deprecated, message: "removed: set `middleware` in `options` (RequestOptions)")
    var middleware: _Middleware { get }
    /// Removed: set ``RequestOptions/skippedMiddleware`` in ``options``.
    @available(*, deprecated, message: "removed: set `skippedMiddleware` in `options` (RequestOptions)")
    var skippedMiddleware: _SkippedMiddleware { get }
}

extension Endpoint {
    /// `GET`.
    public var method: HTTPRequest.Method { .get }
    /// No query items.
    public var query: [URLQueryItem] { [] }
    /// No extra headers.
    public var headers: [String: String] { [:] }
    /// No body.
    public var body: RequestPayload? { nil }
    /// No special policy.
    public var options: RequestOptions { .standard }
    /// No envelope: the body is the response.
    public var envelope: ResponseEnvelope? { nil }
    /// Accepts 2xx statuses.
    public func accepts(_ status: HTTPResponse.Status) -> Bool { status.kind == .successful }
    /// Leaves the prepared request unchanged.
    public func willSend(_ request: inout PreparedRequest) throws {}
    /// No dictionary parameters.
    public var parameters: [String: ParameterValue] { [:] }
    /// No renamed properties.
    public static var parameterNames: [String: String] { [:] }
    /// `.query` for `GET`, `HEAD` and `DELETE`, `.form` otherwise.
    public var parameterEncoding: ParameterEncoding { .methodDependent(method.rawValue) }
    /// ``ParameterEncodingOptions/default``.
    public var parameterEncodingOptions: ParameterEncodingOptions { .default }
    /// The whole body.
    public var keyPath: String? { nil }
    /// JSON.
    public var responseFormat: ResponseFormat { .json }
    /// Accepts every response.
    public func didReceive(_ response: RawResponse) throws {}
    /// Does nothing.
    public func didFail(_ error: CurlewError) {}
}

extension Endpoint where Response: Decodable {
    /// Decodes the part of the body at ``keyPath`` (JSON, or a property list per
    /// ``responseFormat``) with the client's decoder, then runs ``ValidatableModel/validate()`` on the
    /// value and on the elements of a top-level array.
    public func decode(_ response: RawResponse, decoder: JSONDecoder) throws -> Response {
        try response.decode(Response.self, at: keyPath, format: responseFormat, decoder: decoder)
    }
}

extension Endpoint where Response == Data {
    /// Returns the body bytes as they arrived.
    public func decode(_ response: RawResponse, decoder: JSONDecoder) throws -> Data {
        response.body
    }
}

extension Endpoint where Response == String {
    /// Returns the body as UTF-8 text.
    /// - Throws: A `DecodingError.dataCorrupted` if the body is not valid UTF-8.
    public func decode(_ response: RawResponse, decoder: JSONDecoder) throws -> String {
        guard let text = String(validating: response.body, as: UTF8.self) else {
            throw DecodingError.dataCorrupted(.init(codingPath: [], debugDescription: "the body is not valid UTF-8"))
        }
        return text
    }
}

extension Endpoint where Response == EmptyResponse {
    /// Ignores the body.
    public func decode(_ response: RawResponse, decoder: JSONDecoder) throws -> EmptyResponse {
        EmptyResponse()
    }
}

extension Endpoint where _QueueName == _EndpointPropertyNotDeclared {
    /// Removed; not declared.
    public var queueName: _EndpointPropertyNotDeclared { _EndpointPropertyNotDeclared() }
}

extension Endpoint where _RequiresAuthentication == _EndpointPropertyNotDeclared {
    /// Removed; not declared.
    public var requiresAuthentication: _EndpointPropertyNotDeclared { _EndpointPropertyNotDeclared() }
}

extension Endpoint where _UsesAccessories == _EndpointPropertyNotDeclared {
    /// Removed; not declared.
    public var usesAccessories: _EndpointPropertyNotDeclared { _EndpointPropertyNotDeclared() }
}

extension Endpoint where _Middleware == _EndpointPropertyNotDeclared {
    /// Removed; not declared.
    public var middleware: _EndpointPropertyNotDeclared { _EndpointPropertyNotDeclared() }
}

extension Endpoint where _SkippedMiddleware == _EndpointPropertyNotDeclared {
    /// Removed; not declared.
    public var skippedMiddleware: _EndpointPropertyNotDeclared { _EndpointPropertyNotDeclared() }
}

/// The response of a request that expects no body (`204 No Content`, or a body to ignore).
public struct EmptyResponse: Sendable, Hashable, Decodable {
    /// Creates the empty value.
    public init() {}
}
