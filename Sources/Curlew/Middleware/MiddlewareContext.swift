internal import HTTPTypes
public import Logging

/// Per-call facts travelling with a request through the middleware chain. A value: a middleware
/// changes its copy and passes it to `next`, so what it sets is seen by everything inside it.
public struct MiddlewareContext: Sendable {
    /// What this call is (shared with the transport's context).
    private var call: CopyOnWriteBox<CallFacts>
    /// What the client gives every call (shared by all of them until a call changes it).
    private var environment: CopyOnWriteBox<CallEnvironment>

    /// The call.
    public var requestID: CallID {
        get { call.value.requestID }
        set { call.value.requestID = newValue }
    }
    /// The request type's name, for logs and accessories.
    public var requestName: String {
        get { call.value.requestName }
        set { call.value.requestName = newValue }
    }
    /// Which attempt this is, from 1; retrying middleware increment it. Built-in middleware that
    /// resend (retry, token refresh) number a resend after every attempt made so far, those of a
    /// retry inside them included, so the attempts of one call are 1, 2, 3… without repeats.
    public var attempt: Int = 1
    /// The request's identity, computed before any middleware (cache key, fixture name).
    public var identity: RequestIdentity {
        get { call.value.identitySource.identity }
        set { call.value.identitySource = .identity(newValue) }
    }
    /// The call's options (the endpoint's defaults adjusted at the call site).
    public var options: RequestOptions
    /// Where the transport puts the response body.
    public var responseBody: ResponseBodyDisposition = .collect
    /// Statuses that a middleware outside answers itself for this attempt — a `304` to its
    /// conditional request (the cache), a `416` to its range request (a resumed download): the
    /// innermost status check hands such a response up as it is, instead of throwing
    /// `.unacceptableStatus`.
    ///
    /// ```swift
    /// var conditional = context
    /// conditional.handledStatuses.insert(304)
    /// let raw = try await next(requestWithIfNoneMatch, conditional)
    /// if raw.status.code == 304 { return storedAnswer }
    /// ```
    public var handledStatuses: Set<Int> = []
    /// Whether the redirect step above follows this attempt's redirects (it passes them up
    /// unchecked, and the transport drops their bodies unread).
    var followsRedirects = false
    /// How many base URLs past the one in use ``FailoverMiddleware`` starts this attempt at: a
    /// hedge sent to the failover origin (`CurlewResilience`'s `HedgingMiddleware.hedgesToFailover`)
    /// sets it.
    package var failoverStep = 0
    /// The error of an open circuit breaker that sent this call on to the failover origin
    /// (`CurlewResilience`'s `CircuitBreakerMiddleware.Policy.failsOverWhileOpen`): ``FailoverMiddleware`` clears
    /// it when it sends the call elsewhere; the transport step throws it if nothing did.
    package var circuitRefusal: CurlewError?
    /// The credential chosen for this attempt and its version, set by ``TokenRefreshMiddleware``
    /// (so ``AuthorizationMiddleware`` sends exactly the token refresh decisions are based on).
    public var credential: (token: TokenStore.Credential, version: Int)?
    /// The store ``credential`` comes from, when ``TokenRefreshMiddleware`` set it: an
    /// ``AuthorizationMiddleware`` of another store (Basic credentials beside a refreshed bearer
    /// token) sends its own store's credential instead.
    package var credentialStore: ObjectIdentifier?
    /// The origins that may receive the client's credentials, signature and common arguments;
    /// ask with ``trusts(_:)``.
    package var trustedOrigins: TrustedOrigins {
        get { environment.value.trustedOrigins }
        set { environment.value.trustedOrigins = newValue }
    }
    /// The transport, for requests that must bypass the chain (a token refresh).
    public var transport: any Transport {
        get { environment.value.transport }
        set { environment.value.transport = newValue }
    }
    /// Publishes this call's events (retry scheduled, credential refreshed, session ended…).
    public var events: EventReporter {
        get { call.value.events }
        set { call.value.events = newValue }
    }
    /// The client's logger.
    public var logger: Logger {
        get { environment.value.logger }
        set { environment.value.logger = newValue }
    }

    /// The call's endpoint, for the innermost step's status and envelope checks — and, `package`,
    /// for `CurlewTesting`'s mocks that generate a body from the endpoint's response type.
    package var endpoint: (any Endpoint)? { call.value.endpoint }

    /// How the whole call ended, after decoding (``CallOutcome``); `nil` unless the call's options
    /// need it.
    var callOutcome: CallOutcome? {
        get { call.value.outcome }
        set { call.value.outcome = newValue }
    }

    /// Where the redirect step writes the redirects it follows (``RedirectLog``); set by the
    /// cache on the attempts it may store.
    var redirectLog: RedirectLog? {
        get { call.value.redirects }
        set { call.value.redirects = newValue }
    }

    /// When the call must be done: the deadline of ``withDeadline(in:isolation:operation:)`` it
    /// runs under, `nil` for none. A middleware that waits (a back-off, a hedge) should not wait
    /// past it; the innermost step caps each attempt by it.
    public var deadline: ContinuousClock.Instant? { CallDeadline.current }

    /// ``ClientConfiguration/deadlineHeader``.
    var deadlineHeader: HTTPField.Name? { environment.value.deadlineHeader }

    /// The rest of this call's chain after the first middleware `isLayer` picks, composed anew so
    /// that it may outlive the call (the `next` a middleware receives may not): for work that
    /// goes on after the call has returned, such as a cache's background revalidation. `nil` in
    /// a context made outside a client, or when no middleware of the call's chain is picked.
    func chain(after isLayer: (any APIMiddleware) -> Bool) -> MiddlewareNext? {
        let chain = APIClient.middlewareChain(environment.value.middleware, for: options)
        guard let index = chain.firstIndex(where: isLayer) else { return nil }
        return MiddlewareChain.compose(Array(chain[(index + 1)...]))
    }

    /// Whether the call needs a credential (``RequestOptions/requiresAuthentication``).
    public var requiresAuthentication: Bool { options.requiresAuthentication }

    /// Creates a context (the ``APIClient`` makes one per call; tests of middleware make their own).
    /// `trustedOrigins` are URLs or origins (`https://api.test`) that ``trusts(_:)`` accepts.
    public init(
        requestID: CallID = .next(), requestName: String, identity: RequestIdentity, options: RequestOptions = RequestOptions(),
        trustedOrigins: Set<String> = [], transport: any Transport,
        events: EventReporter? = nil, logger: Logger = Logger(label: "curlew")
    ) {
        self.init(
            requestID: requestID, requestName: requestName, identity: .identity(identity),
            events: events ?? .silent(requestID: requestID, requestName: requestName), endpoint: nil,
            environment: CopyOnWriteBox(CallEnvironment(transport: transport, trustedOrigins: TrustedOrigins(trustedOrigins), logger: logger)),
            options: options)
    }

    /// A call's context: what the call is (built here, in its box), and the client's
    /// environment box, shared.
    init(
        requestID: CallID, requestName: String, identity: CallFacts.IdentitySource, events: EventReporter, endpoint: (any Endpoint)?,
        environment: CopyOnWriteBox<CallEnvironment>, options: RequestOptions
    ) {
        self.call = CopyOnWriteBox(
            CallFacts(
                requestID: requestID, requestName: requestName, identitySource: identity, events: events, endpoint: endpoint))
        self.environment = environment
        self.options = options
    }

    /// Whether `url` belongs to one of the client's trusted origins or the call's own
    /// ``RequestOptions/trustedOrigins``. Built-in middleware that add credentials, signatures or
    /// common arguments do nothing for other origins.
    public func trusts(_ url: String) -> Bool {
        environment.value.trustedOrigins.contains(url) || (!options.trustedOrigins.isEmpty && TrustedOrigins(options.trustedOrigins).contains(url))
    }

    /// The transport's view of this context.
    var transportContext: TransportContext {
        TransportContext(call: call, attempt: attempt, responseBody: responseBody, options: options, followsRedirects: followsRedirects)
    }
}
