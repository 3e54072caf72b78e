public import Curlew

/// Switches mocks on: answers calls from fixtures, stubs or generated data *through the transport
/// slot*, so every middleware, the status and envelope checks, `Endpoint.didReceive(_:)`,
/// decoding and validation still run, and nothing reaches the network.
///
/// Put one in a client's middleware to mock every call (each call or endpoint type may still
/// choose another mode, or ``MockMode/off``, with ``Curlew/RequestOptions/mock``):
///
/// ```swift
/// let store = try FixtureStore(directory: "Tests/Fixtures")
/// let client = APIClient(configuration: ClientConfiguration(
///     baseURL: "https://api.example.com", middleware: [MockMiddleware(.fixtures(store))]))
/// let results = try await client.response(for: SearchRequest(key: "sunset"))
/// // results.source == .mock, results.source.detail == "SearchRequest.json"
/// ```
///
/// Setting ``Curlew/RequestOptions/mock`` adds one to the call automatically, so a per-call or
/// per-endpoint-type mode works on any client.
///
/// **Phase.** `MiddlewarePhase.mock`, outermost. The middleware does not answer itself: it
/// replaces `MiddlewareContext.transport` with a mock transport and calls `next`, so all the
/// middleware inside it (retry, authorization, signing…) see the request and the mocked
/// response exactly as they would the network's. A cache inside it sees mocked responses with
/// source `ResponseSource.mock` and does not store them.
///
/// **Where it lives.** Mocks are `CurlewTesting`'s, not `Curlew`'s, so an app's production build
/// carries no mock machinery. The core knows nothing of them; what they use of it is generic: the
/// middleware chain and the transport slot, the call's endpoint in the middleware context (for
/// ``MockMode/generated(by:)``), a hook that delivers an in-memory body to a stream, a file or a
/// download, `ResponseSource.mock`, and the `.fixture…` and `.mockGenerationFailed` codes of the
/// one error type.
public struct MockMiddleware: APIMiddleware {
    /// The mode for calls whose options choose none; `nil` lets such calls go to the network.
    public let defaultMode: MockMode?

    /// Creates the middleware.
    /// - Parameter defaultMode: The mode for every call that does not set ``Curlew/RequestOptions/mock``;
    ///   `nil` (the default) mocks only calls that do.
    public init(_ defaultMode: MockMode? = nil) {
        self.defaultMode = defaultMode
    }

    /// `MiddlewareKind.mock`.
    public var kind: MiddlewareKind { .mock }
    /// `MiddlewarePhase.mock`: outermost.
    public var phase: MiddlewarePhase? { .mock }

    /// Replaces the transport with the call's mock (unless an outer ``MockMiddleware`` already did,
    /// or the mode is off) and runs the rest of the chain. A mode that generates from the call's
    /// endpoint type gets the endpoint the client put in the context.
    public nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        guard !(context.transport is MockModeTransport), let mode = context.options.mock ?? defaultMode, !mode.isOff else {
            return try await next(request, context)
        }
        let model = mode.generatesPerCall ? context.endpoint.map { MockResponseModel($0) } : nil
        var context = context
        context.transport = MockModeTransport(mode: mode, model: model)
        return try await next(request, context)
    }
}

extension MiddlewarePhase {
    /// ``MockMiddleware`` and ``FixtureRecorder``: outermost (rank 50), so the mock transport they
    /// install is in place before any other middleware runs.
    public static let mock = MiddlewarePhase(rank: 50, name: "mock")
}

extension MiddlewareKind {
    /// ``MockMiddleware``.
    public static let mock = MiddlewareKind("mock")
}
