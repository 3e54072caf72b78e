public import Curlew
import Foundation
public import HTTPTypes
import Synchronization

/// A `Transport` that answers from a closure and records every request it saw, for unit tests
/// of code that uses an `APIClient`.
///
/// ```swift
/// let transport = MockTransport { request in
///     .json(#"{"pictures":[]}"#, for: request)
/// }
/// let client = APIClient(baseURL: "https://api.test", transport: transport)
/// _ = try await client.send(SearchRequest(key: "sunset"))
/// #expect(transport.requests.map(\.url) == ["https://api.test/pictures/search?key=sunset"])
/// ```
public final class MockTransport: Transport {
    /// Produces the response for a request, or throws to simulate a transport failure.
    public typealias Handler = @Sendable (PreparedRequest) async throws -> RawResponse

    private let handler: Handler
    /// Every request sent, in order. Guarded by its own mutex.
    private let recorded = Mutex<[PreparedRequest]>([])

    /// Creates a mock answering every request with `handler`.
    public init(_ handler: @escaping Handler) {
        self.handler = handler
    }

    /// The requests sent so far, in order.
    public var requests: [PreparedRequest] { recorded.withLock { $0 } }

    /// The context of every call, in order.
    public var contexts: [TransportContext] { recordedContexts.withLock { $0 } }
    private let recordedContexts = Mutex<[TransportContext]>([])

    /// Records the request and returns the handler's response, marked with source `.mock`.
    public nonisolated(nonsending) func send(_ request: PreparedRequest, context: TransportContext) async throws -> RawResponse {
        recorded.withLock { $0.append(request) }
        recordedContexts.withLock { $0.append(Self.detached(context)) }
        try Task.checkCancellation()
        var response = try await handler(request)
        response.source = .mock
        return response
    }
}

extension MockTransport {
    /// `context` without the client's transport (this mock) it carries: a recorded context that
    /// kept it would make the mock own itself, and it and every recorded request would leak.
    static func detached(_ context: TransportContext) -> TransportContext {
        TransportContext(
            requestID: context.requestID, requestName: context.requestName, attempt: context.attempt,
            identity: context.identity, responseBody: context.responseBody, options: context.options,
            events: context.events)
    }
}

extension RawResponse {
    /// A JSON response for a mock.
    /// - Parameters:
    ///   - text: The JSON text.
    ///   - status: The status. Default: 200.
    ///   - request: The request being answered (its URL becomes the response URL).
    public static func json(_ text: String, status: HTTPResponse.Status = .ok, for request: PreparedRequest) -> RawResponse {
        RawResponse(status: status, headers: [.contentType: "application/json"], body: Data(text.utf8), url: request.url, source: .mock)
    }

    /// A plain-text response for a mock.
    public static func text(_ text: String, status: HTTPResponse.Status = .ok, for request: PreparedRequest) -> RawResponse {
        RawResponse(status: status, headers: [.contentType: "text/plain; charset=utf-8"], body: Data(text.utf8), url: request.url, source: .mock)
    }
}
