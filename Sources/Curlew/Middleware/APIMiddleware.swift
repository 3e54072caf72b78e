/// One step of the onion between an ``APIClient`` and its ``Transport``: sees every prepared request
/// on its way in and every response (or error) on its way out.
///
/// Middleware run in the order they are registered: **the first registered sees the request
/// first and the response last.** Client-wide middleware (``ClientConfiguration/middleware``)
/// come first, then the request's own (``Request/middleware``); a request can skip a middleware
/// by its ``kind`` (``Request/skippedMiddleware``).
///
/// ```swift
/// struct Timing: APIMiddleware {
///     func intercept(
///         _ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext
///     ) async throws -> MiddlewareResponse {
///         let started = ContinuousClock.now
///         defer { context.logger.debug("\(request.summary) took \(ContinuousClock.now - started)") }
///         return try await next(request, context)       // everything inside runs here
///     }
/// }
///
/// // Timing sees the request before Signing and the response after it:
/// let configuration = ClientConfiguration(baseURL: base, middleware: [Timing(), signing])
/// ```
///
/// The innermost step sends the request through the transport, checks the status
/// (``Request/accepts(_:)``), applies the unified response envelope if one is configured in the
/// context, and decodes the ``Request/Response``. So middleware see decoded values in
/// ``MiddlewareResponse/value`` and every failure — transport, HTTP status, business code,
/// decoding — as a thrown ``CurlewError``. Calling `next` again (retry, token refresh) reruns
/// everything inside, so signatures and auth headers are recomputed on each attempt.
///
/// A middleware does I/O only through `next`; the exception is token refresh, whose refresh
/// request goes straight to ``MiddlewareContext/transport``, outside the chain.
public protocol APIMiddleware: Sendable {
    /// The kind a request names to skip this middleware. Default: the type's name.
    var kind: MiddlewareKind { get }

    /// Handles one request.
    /// - Parameters:
    ///   - request: The prepared request; pass it (or a changed copy) to `next`.
    ///   - context: Per-call facts (attempt, credential, envelope, logger); pass it on to `next`.
    ///   - next: The rest of the chain.
    /// - Returns: The response, usually what `next` returned.
    /// - Throws: Usually a ``CurlewError``.
    func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> MiddlewareResponse
}

extension APIMiddleware {
    /// The type's name.
    public var kind: MiddlewareKind { MiddlewareKind(String(describing: Self.self)) }
}

/// The rest of the chain, as seen by an ``APIMiddleware``.
public typealias MiddlewareNext = @Sendable (PreparedRequest, MiddlewareContext) async throws -> MiddlewareResponse

/// What comes back through the chain: the raw response and the decoded value.
public struct MiddlewareResponse: Sendable {
    /// Status, headers and the whole body as received.
    public var raw: RawResponse
    /// The request's decoded ``Request/Response`` (type-erased; the client casts it back).
    public var value: any Sendable

    /// Creates a response.
    public init(raw: RawResponse, value: any Sendable) {
        self.raw = raw
        self.value = value
    }
}

/// Names a kind of middleware so a request can skip it.
public struct MiddlewareKind: Hashable, Sendable, CustomStringConvertible {
    /// The kind's name.
    public let name: String

    /// Creates a kind.
    public init(_ name: String) { self.name = name }

    /// ``AuthorizationMiddleware``.
    public static let authorization = MiddlewareKind("authorization")
    /// ``SigningMiddleware``.
    public static let signing = MiddlewareKind("signing")
    /// ``CommonArgumentsMiddleware``.
    public static let commonArguments = MiddlewareKind("commonArguments")
    /// ``UnifiedResponseMiddleware`` (LCNetwork's `ignoreUnifiedResponseProcess`).
    public static let unifiedResponse = MiddlewareKind("unifiedResponse")
    /// ``TokenRefreshMiddleware``.
    public static let tokenRefresh = MiddlewareKind("tokenRefresh")
    /// ``ServerClock``.
    public static let serverClock = MiddlewareKind("serverClock")
    /// ``FailoverMiddleware``.
    public static let failover = MiddlewareKind("failover")
    /// ``URLRewriteMiddleware``.
    public static let urlRewrite = MiddlewareKind("urlRewrite")
    /// ``RetryMiddleware``.
    public static let retry = MiddlewareKind("retry")

    /// The name.
    public var description: String { name }
}
