internal import Logging

/// What a ``Transport`` knows about the call it serves, besides the request itself.
///
/// The ``APIClient`` makes one per attempt from the middleware context; a transport uses
/// ``events`` to report progress and the head, and ``responseBody`` to decide where the body goes.
public struct TransportContext: Sendable {
    /// The call's facts, shared with the middleware context (one reference to copy).
    private var facts: MiddlewareContext.Facts

    /// The call.
    public var requestID: CallID {
        get { facts.requestID }
        set { facts = facts.with(requestID: newValue) }
    }
    /// The request type's name, e.g. `"SearchRequest"`.
    public var requestName: String {
        get { facts.requestName }
        set { facts = facts.with(requestName: newValue) }
    }
    /// The attempt, from 1.
    public var attempt: Int
    /// The request's identity computed before any middleware (the cache key, the fixture name).
    public var identity: RequestIdentity {
        get { facts.identity }
        set { facts = facts.with(identity: newValue) }
    }
    /// Where the response body goes: collected (default), streamed or written to a file.
    public var responseBody: ResponseBodyDisposition
    /// The call's options, with the decisions made above the transport.
    public var options: RequestOptions
    /// Whether the caller follows redirects: a redirect response with a `Location` is a hop, not
    /// the answer, so its body need not be read (set by the client's redirect step).
    var followsRedirects = false
    /// Publishes this call's events (progress, head received, redirects).
    public var events: EventReporter {
        get { facts.events }
        set { facts = facts.with(events: newValue) }
    }

    /// Creates a context.
    public init(
        requestID: CallID = .next(), requestName: String, attempt: Int = 1, identity: RequestIdentity,
        responseBody: ResponseBodyDisposition = .collect, options: RequestOptions = RequestOptions(), events: EventReporter? = nil
    ) {
        self.facts = MiddlewareContext.Facts(
            requestID: requestID, requestName: requestName, identity: identity, trustedOrigins: TrustedOrigins([]),
            transport: TransportContext.noTransport, events: events ?? .silent(requestID: requestID, requestName: requestName),
            logger: TransportContext.noLogger)
        self.attempt = attempt
        self.responseBody = responseBody
        self.options = options
    }

    init(facts: MiddlewareContext.Facts, attempt: Int, responseBody: ResponseBodyDisposition, options: RequestOptions, followsRedirects: Bool) {
        self.facts = facts
        self.followsRedirects = followsRedirects
        self.attempt = attempt
        self.responseBody = responseBody
        self.options = options
    }

    /// A context for a request sent outside any client call (a token refresh, a test).
    public static func standalone(for request: PreparedRequest, name: String = "") -> TransportContext {
        TransportContext(requestName: name, identity: RequestIdentity(request, name: name))
    }

    /// A transport context does not carry a transport; the shared facts need one.
    private static let noTransport: any Transport = UnusedTransport()
    private static let noLogger = Logger(label: "curlew")
}

/// Stands in for "no transport" in the facts a standalone ``TransportContext`` holds.
private struct UnusedTransport: Transport {
    nonisolated(nonsending) func send(_ request: PreparedRequest, context: TransportContext) async throws -> RawResponse {
        throw CurlewError(code: .transportFailure, message: "no transport in a standalone context", request: request.summary)
    }
}
