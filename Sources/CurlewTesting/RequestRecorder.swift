public import Curlew
import Synchronization

/// Records every request as it leaves the middleware chain — after authorization, common
/// arguments and signing, right before the transport (a mock's or the network's) — and the raw
/// response or error that came back. Use it with fixture, stub or generated mocks, where there is
/// no `MockTransport` to ask.
///
/// ```swift
/// let recorder = RequestRecorder()
/// let client = APIClient(configuration: ClientConfiguration(
///     baseURL: "https://api.test", middleware: [MockMiddleware(.fixtures(store)), recorder]))
/// _ = try await client.send(SearchRequest(key: "sunset"))
/// expectRequest(recorder.requests.first, method: .get, path: "/pictures/search", query: ["key": "sunset"])
/// ```
///
/// Its phase (rank 1000) is after every built-in, so it sees exactly what is sent.
public final class RequestRecorder: APIMiddleware {
    /// The exchanges so far. Guarded by its own mutex.
    private let recorded = Mutex<[Exchange]>([])

    /// One recorded exchange.
    public struct Exchange: Sendable {
        /// The request as sent.
        public var request: PreparedRequest
        /// The request type's name.
        public var requestName: String
        /// The attempt (from 1).
        public var attempt: Int
        /// The raw response, or `nil` when the attempt failed.
        public var response: RawResponse?
        /// The error, when the attempt failed.
        public var error: (any Error)?
    }

    /// Creates an empty recorder.
    public init() {}

    /// `requestRecorder`.
    public var kind: MiddlewareKind { MiddlewareKind("requestRecorder") }
    /// Innermost: rank 1000, after signing.
    public var phase: MiddlewarePhase? { MiddlewarePhase(rank: 1000, name: "requestRecorder") }

    /// Every exchange, in order.
    public var exchanges: [Exchange] { recorded.withLock { $0 } }
    /// Every request sent, in order.
    public var requests: [PreparedRequest] { exchanges.map(\.request) }

    /// Forgets what was recorded.
    public func reset() { recorded.withLock { $0.removeAll() } }

    /// Records the request and its outcome.
    public nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        do {
            let response = try await next(request, context)
            recorded.withLock {
                $0.append(Exchange(request: request, requestName: context.requestName, attempt: context.attempt, response: response))
            }
            return response
        } catch {
            recorded.withLock {
                $0.append(Exchange(request: request, requestName: context.requestName, attempt: context.attempt, error: error))
            }
            throw error
        }
    }
}
