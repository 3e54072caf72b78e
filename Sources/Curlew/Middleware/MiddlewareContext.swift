public import Logging

/// Per-call facts travelling with a request through the middleware chain. A value: a middleware
/// changes its copy and passes it to `next`, so what it sets is seen by everything inside it.
public struct MiddlewareContext: Sendable {
    /// The request type's name, for logs and accessories.
    public var requestName: String
    /// Which attempt this is, from 1; retrying middleware increment it.
    public var attempt: Int = 1
    /// Whether the request needs a credential (``Request/requiresAuthentication``).
    public var requiresAuthentication: Bool
    /// The credential chosen for this attempt and its version, set by ``TokenRefreshMiddleware``
    /// (so ``AuthorizationMiddleware`` sends exactly the token refresh decisions are based on).
    public var credential: (token: TokenStore.Credential, version: Int)?
    /// The envelope the innermost step unwraps, set by ``UnifiedResponseMiddleware``.
    public var envelope: ResponseEnvelope?
    /// The transport, for requests that must bypass the chain (a token refresh).
    public var transport: any Transport
    /// Publishes client events (for example ``ClientEvent/sessionEnded(reason:)``).
    public var events: EventBroadcaster
    /// The client's logger.
    public var logger: Logger

    /// Creates a context (the ``APIClient`` makes one per call; tests of middleware make their own).
    public init(requestName: String, requiresAuthentication: Bool = false, transport: any Transport, events: EventBroadcaster = EventBroadcaster(), logger: Logger = Logger(label: "curlew")) {
        self.requestName = requestName
        self.requiresAuthentication = requiresAuthentication
        self.transport = transport
        self.events = events
        self.logger = logger
    }
}
