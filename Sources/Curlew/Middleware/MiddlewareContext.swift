public import Logging

/// Per-call facts travelling with a request through the middleware chain. A value: a middleware
/// changes its copy and passes it to `next`, so what it sets is seen by everything inside it.
public struct MiddlewareContext: Sendable {
    /// The call.
    public var requestID: CallID
    /// The request type's name, for logs and accessories.
    public var requestName: String
    /// Which attempt this is, from 1; retrying middleware increment it.
    public var attempt: Int = 1
    /// The request's identity, computed before any middleware (cache key, fixture name).
    public var identity: RequestIdentity
    /// The call's options (the endpoint's defaults adjusted at the call site).
    public var options: RequestOptions
    /// Where the transport puts the response body.
    public var responseBody: ResponseBodyDisposition = .collect
    /// The credential chosen for this attempt and its version, set by ``TokenRefreshMiddleware``
    /// (so ``AuthorizationMiddleware`` sends exactly the token refresh decisions are based on).
    public var credential: (token: TokenStore.Credential, version: Int)?
    /// The origins that may receive the client's credentials, signature and common arguments.
    public var trustedOrigins: TrustedOrigins
    /// The transport, for requests that must bypass the chain (a token refresh).
    public var transport: any Transport
    /// Publishes this call's events (retry scheduled, credential refreshed, session ended…).
    public var events: EventReporter
    /// The client's logger.
    public var logger: Logger

    /// Whether the call needs a credential (``RequestOptions/requiresAuthentication``).
    public var requiresAuthentication: Bool { options.requiresAuthentication }

    /// Creates a context (the ``APIClient`` makes one per call; tests of middleware make their own).
    public init(
        requestID: CallID = .next(), requestName: String, identity: RequestIdentity, options: RequestOptions = RequestOptions(),
        trustedOrigins: TrustedOrigins = TrustedOrigins([]), transport: any Transport,
        events: EventReporter? = nil, logger: Logger = Logger(label: "curlew")
    ) {
        self.requestID = requestID
        self.requestName = requestName
        self.identity = identity
        self.options = options
        self.trustedOrigins = trustedOrigins
        self.transport = transport
        self.events = events ?? .silent(requestID: requestID, requestName: requestName)
        self.logger = logger
    }

    /// Whether `url` belongs to one of the ``trustedOrigins`` or the call's own
    /// ``RequestOptions/trustedOrigins``. Built-in middleware that add credentials, signatures or
    /// common arguments do nothing for other origins.
    public func trusts(_ url: String) -> Bool {
        trustedOrigins.contains(url) || (!options.trustedOrigins.isEmpty && TrustedOrigins(options.trustedOrigins).contains(url))
    }

    /// The transport's view of this context.
    var transportContext: TransportContext {
        TransportContext(
            requestID: requestID, requestName: requestName, attempt: attempt, identity: identity,
            responseBody: responseBody, options: options, events: events)
    }
}
