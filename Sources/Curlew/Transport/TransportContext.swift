/// What a ``Transport`` knows about the call it serves, besides the request itself.
///
/// The ``APIClient`` makes one per call; middleware pass it on (a retry increments ``attempt``).
/// A transport uses ``events`` to report progress and the head, and ``responseBody`` to decide
/// where the body goes.
public struct TransportContext: Sendable {
    /// The call.
    public var requestID: CallID
    /// The request type's name, e.g. `"SearchRequest"`.
    public var requestName: String
    /// The attempt, from 1.
    public var attempt: Int
    /// The request's identity computed before any middleware (the cache key, the fixture name).
    public var identity: RequestIdentity
    /// Where the response body goes: collected (default), streamed or written to a file.
    public var responseBody: ResponseBodyDisposition
    /// The call's options, with the decisions made above the transport.
    public var options: RequestOptions
    /// Publishes this call's events (progress, head received, redirects).
    public var events: EventReporter

    /// Creates a context.
    public init(
        requestID: CallID = .next(), requestName: String, attempt: Int = 1, identity: RequestIdentity,
        responseBody: ResponseBodyDisposition = .collect, options: RequestOptions = RequestOptions(), events: EventReporter? = nil
    ) {
        self.requestID = requestID
        self.requestName = requestName
        self.attempt = attempt
        self.identity = identity
        self.responseBody = responseBody
        self.options = options
        self.events = events ?? .silent(requestID: requestID, requestName: requestName)
    }

    /// A context for a request sent outside any client call (a token refresh, a test).
    public static func standalone(for request: PreparedRequest, name: String = "") -> TransportContext {
        TransportContext(requestName: name, identity: RequestIdentity(request, name: name))
    }
}
