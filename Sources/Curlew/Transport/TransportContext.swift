/// What a ``Transport`` knows about the call it serves, besides the request itself.
///
/// The ``APIClient`` makes one per attempt from the middleware context; a transport uses
/// ``events`` to report progress and the head, and ``responseBody`` to decide where the body goes.
public struct TransportContext: Sendable {
    /// What the call is, shared with the middleware context (one reference to copy).
    private var call: CopyOnWriteBox<CallFacts>

    /// The call.
    public var requestID: CallID {
        get { call.value.requestID }
        set { call.value.requestID = newValue }
    }
    /// The request type's name, e.g. `"SearchRequest"`.
    public var requestName: String {
        get { call.value.requestName }
        set { call.value.requestName = newValue }
    }
    /// The attempt, from 1.
    public var attempt: Int
    /// The request's identity computed before any middleware (the cache key, the fixture name).
    public var identity: RequestIdentity {
        get { call.value.identitySource.identity }
        set { call.value.identitySource = .identity(newValue) }
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
        get { call.value.events }
        set { call.value.events = newValue }
    }

    /// Creates a context.
    public init(
        requestID: CallID = .next(), requestName: String, attempt: Int = 1, identity: RequestIdentity,
        responseBody: ResponseBodyDisposition = .collect, options: RequestOptions = RequestOptions(), events: EventReporter? = nil
    ) {
        self.call = CopyOnWriteBox(
            CallFacts(
                requestID: requestID, requestName: requestName, identitySource: .identity(identity),
                events: events ?? .silent(requestID: requestID, requestName: requestName), endpoint: nil))
        self.attempt = attempt
        self.responseBody = responseBody
        self.options = options
    }

    init(call: CopyOnWriteBox<CallFacts>, attempt: Int, responseBody: ResponseBodyDisposition, options: RequestOptions, followsRedirects: Bool) {
        self.call = call
        self.followsRedirects = followsRedirects
        self.attempt = attempt
        self.responseBody = responseBody
        self.options = options
    }

    /// A context for a request sent outside any client call (a token refresh, a test).
    public static func standalone(for request: PreparedRequest, name: String = "") -> TransportContext {
        TransportContext(requestName: name, identity: RequestIdentity(request, name: name))
    }
}
