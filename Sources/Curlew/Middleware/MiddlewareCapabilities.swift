public import Foundation

/// What a middleware contributes that the client itself must know — declared by the middleware,
/// never discovered by asking for concrete types.
///
/// The client reads the capabilities of its middleware once, when it is created: the origins it
/// trusts besides its base URL, whether a login-required call can get a credential, where server
/// time comes from, which cache it answers from. A middleware of your own declares what applies
/// to it:
///
/// ```swift
/// struct GatewayAuth: APIMiddleware {
///     var capabilities: MiddlewareCapabilities { MiddlewareCapabilities(providesCredentials: true) }
///     func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
///         var signed = request
///         signed.headers[.authorization] = "Gateway \(await GatewayToken.current())"
///         return try await next(signed, context)
///     }
/// }
/// ```
public struct MiddlewareCapabilities: Sendable {
    /// Base URLs the middleware sends requests to (``FailoverMiddleware``): trusted like the
    /// client's own base URL, so credentials, signatures and common arguments reach them.
    public var trustedOrigins: [String]
    /// Whether the middleware supplies credentials (``AuthorizationMiddleware``): a call that
    /// requires authentication fails with `.missingCredentialSource` when none does.
    public var providesCredentials: Bool
    /// The server's current time (``ServerClock``), for ``APIClient/serverTime()``.
    public var serverTime: (@Sendable () -> Date)?
    /// The response cache the middleware is (``APIClient/responseCache``).
    public var responseCache: ResponseCache?
    /// Statuses the middleware acts on when an answer carries them — resending the call
    /// (``RetryMiddleware``) or refreshing a credential (``TokenRefreshMiddleware``). A transport
    /// that hands every status to its caller as an answer (the OpenAPI transport) shows these
    /// to the middleware as the failure it expects, so it still gets its turn.
    public var handledStatuses: Set<Int>

    /// Declares capabilities; every one is off by default.
    public init(
        trustedOrigins: [String] = [], providesCredentials: Bool = false, serverTime: (@Sendable () -> Date)? = nil,
        responseCache: ResponseCache? = nil, handledStatuses: Set<Int> = []
    ) {
        self.trustedOrigins = trustedOrigins
        self.providesCredentials = providesCredentials
        self.serverTime = serverTime
        self.responseCache = responseCache
        self.handledStatuses = handledStatuses
    }

    /// No capability: what a middleware declares unless it says otherwise.
    public static let none = MiddlewareCapabilities()
}
