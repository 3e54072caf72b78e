public import Logging

/// Per-call facts travelling with a request through the middleware chain. A value: a middleware
/// changes its copy and passes it to `next`, so what it sets is seen by everything inside it.
public struct MiddlewareContext: Sendable {
    /// The facts that stay the same for the whole call, in one shared immutable box, so passing
    /// the context from middleware to middleware costs one reference count instead of a dozen.
    final class Facts: Sendable {
        let requestID: CallID
        let requestName: String
        /// Where ``identity`` comes from: given, or computed from the prepared request when
        /// read (most calls never read it: it is the cache key and the fixture name).
        private let identitySource: IdentitySource
        let trustedOrigins: TrustedOrigins
        let transport: any Transport
        let events: EventReporter
        let logger: Logger
        /// The endpoint whose ``Endpoint/accepts(_:)`` and envelope the innermost step checks
        /// the response against; `nil` in a context made outside a call (no check).
        let endpoint: (any Endpoint)?

        enum IdentitySource: Sendable {
            case identity(RequestIdentity)
            /// The request before any middleware, with the name and volatile parameters.
            case request(PreparedRequest, name: String, volatileParameters: Set<String>)
        }

        /// The request's identity before any middleware.
        var identity: RequestIdentity {
            switch identitySource {
            case .identity(let identity): identity
            case .request(let request, let name, let volatileParameters):
                RequestIdentity(request, name: name, volatileParameters: volatileParameters)
            }
        }

        convenience init(
            requestID: CallID, requestName: String, identity: RequestIdentity, trustedOrigins: TrustedOrigins,
            transport: any Transport, events: EventReporter, logger: Logger, endpoint: (any Endpoint)? = nil
        ) {
            self.init(
                requestID: requestID, requestName: requestName, identitySource: .identity(identity), trustedOrigins: trustedOrigins,
                transport: transport, events: events, logger: logger, endpoint: endpoint)
        }

        init(
            requestID: CallID, requestName: String, identitySource: IdentitySource, trustedOrigins: TrustedOrigins,
            transport: any Transport, events: EventReporter, logger: Logger, endpoint: (any Endpoint)?
        ) {
            self.requestID = requestID
            self.requestName = requestName
            self.identitySource = identitySource
            self.trustedOrigins = trustedOrigins
            self.transport = transport
            self.events = events
            self.logger = logger
            self.endpoint = endpoint
        }

        func with(
            requestID: CallID? = nil, requestName: String? = nil, identity: RequestIdentity? = nil,
            trustedOrigins: TrustedOrigins? = nil, transport: (any Transport)? = nil, events: EventReporter? = nil,
            logger: Logger? = nil
        ) -> Facts {
            Facts(
                requestID: requestID ?? self.requestID, requestName: requestName ?? self.requestName,
                identitySource: identity.map { .identity($0) } ?? identitySource, trustedOrigins: trustedOrigins ?? self.trustedOrigins,
                transport: transport ?? self.transport, events: events ?? self.events, logger: logger ?? self.logger,
                endpoint: endpoint)
        }
    }

    private var facts: Facts

    /// The call.
    public var requestID: CallID {
        get { facts.requestID }
        set { facts = facts.with(requestID: newValue) }
    }
    /// The request type's name, for logs and accessories.
    public var requestName: String {
        get { facts.requestName }
        set { facts = facts.with(requestName: newValue) }
    }
    /// Which attempt this is, from 1; retrying middleware increment it.
    public var attempt: Int = 1
    /// The request's identity, computed before any middleware (cache key, fixture name).
    public var identity: RequestIdentity {
        get { facts.identity }
        set { facts = facts.with(identity: newValue) }
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
    /// The credential chosen for this attempt and its version, set by ``TokenRefreshMiddleware``
    /// (so ``AuthorizationMiddleware`` sends exactly the token refresh decisions are based on).
    public var credential: (token: TokenStore.Credential, version: Int)?
    /// The origins that may receive the client's credentials, signature and common arguments;
    /// ask with ``trusts(_:)``.
    package var trustedOrigins: TrustedOrigins {
        get { facts.trustedOrigins }
        set { facts = facts.with(trustedOrigins: newValue) }
    }
    /// The transport, for requests that must bypass the chain (a token refresh).
    public var transport: any Transport {
        get { facts.transport }
        set { facts = facts.with(transport: newValue) }
    }
    /// Publishes this call's events (retry scheduled, credential refreshed, session ended…).
    public var events: EventReporter {
        get { facts.events }
        set { facts = facts.with(events: newValue) }
    }
    /// The client's logger.
    public var logger: Logger {
        get { facts.logger }
        set { facts = facts.with(logger: newValue) }
    }

    /// The call's endpoint, for the innermost step's status and envelope checks — and, `package`,
    /// for `CurlewTesting`'s mocks that generate a body from the endpoint's response type.
    package var endpoint: (any Endpoint)? { facts.endpoint }

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
            requestID: requestID, requestName: requestName, identity: .identity(identity), options: options,
            trustedOrigins: TrustedOrigins(trustedOrigins),
            transport: transport, events: events, logger: logger, endpoint: nil)
    }

    /// A call's context: as the public initializer, plus the endpoint the innermost step checks
    /// the response against.
    init(
        requestID: CallID, requestName: String, identity: Facts.IdentitySource, options: RequestOptions, trustedOrigins: TrustedOrigins,
        transport: any Transport, events: EventReporter?, logger: Logger, endpoint: (any Endpoint)?
    ) {
        self.facts = Facts(
            requestID: requestID, requestName: requestName, identitySource: identity, trustedOrigins: trustedOrigins,
            transport: transport, events: events ?? .silent(requestID: requestID, requestName: requestName), logger: logger,
            endpoint: endpoint)
        self.options = options
    }

    /// Whether `url` belongs to one of the client's trusted origins or the call's own
    /// ``RequestOptions/trustedOrigins``. Built-in middleware that add credentials, signatures or
    /// common arguments do nothing for other origins.
    public func trusts(_ url: String) -> Bool {
        facts.trustedOrigins.contains(url) || (!options.trustedOrigins.isEmpty && TrustedOrigins(options.trustedOrigins).contains(url))
    }

    /// The transport's view of this context.
    var transportContext: TransportContext {
        TransportContext(facts: facts, attempt: attempt, responseBody: responseBody, options: options, followsRedirects: followsRedirects)
    }
}
