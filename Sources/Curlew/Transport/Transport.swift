/// Sends one prepared request and returns the raw response. That is its whole job.
///
/// ``CurlTransport`` is the default, driving libcurl on an engine thread. `CurlewTesting`
/// supplies mock transports for unit tests of the layers above.
///
/// A transport throws ``/CurlewCore/CurlewError`` with a transport-level code (or `.cancelled`) and never
/// inspects the status: non-2xx responses are returned, not thrown; the ``APIClient`` decides.
/// It honours ``TransportContext/responseBody`` (collect, stream or file) and may report
/// progress through ``TransportContext/events``.
///
/// ```swift
/// struct EchoTransport: Transport {
///     func send(_ request: PreparedRequest, context: TransportContext) async throws -> RawResponse {
///         RawResponse(status: .ok, body: request.body ?? Data(), url: request.url)
///     }
/// }
/// ```
public protocol Transport: Sendable {
    /// Performs the exchange.
    /// - Parameters:
    ///   - request: A validated request; nothing downstream re-validates it.
    ///   - context: The call's id, name, attempt, identity, body disposition and event reporter.
    /// - Returns: The response, whatever its status.
    /// - Throws: ``/CurlewCore/CurlewError`` with a transport code, or `.cancelled` when the task is cancelled.
    ///
    /// Like ``APIMiddleware/intercept(_:context:next:)``, the requirement runs on its caller's
    /// executor (`nonisolated(nonsending)`); a plain `async` implementation satisfies it too.
    nonisolated(nonsending) func send(_ request: PreparedRequest, context: TransportContext) async throws -> RawResponse
}

extension Transport {
    /// Sends a request outside any client call, with a ``TransportContext/standalone(for:name:)``
    /// context (a token refresh, a health check).
    public nonisolated(nonsending) func send(_ request: PreparedRequest) async throws -> RawResponse {
        try await send(request, context: .standalone(for: request))
    }
}
