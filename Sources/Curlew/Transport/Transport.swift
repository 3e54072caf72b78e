/// Sends one prepared request and returns the raw response. That is its whole job.
///
/// ``CurlTransport`` is the default, driving libcurl on an engine thread. `CurlewTesting`
/// supplies mock transports for unit tests of the layers above.
///
/// A transport throws ``CurlewError`` with a transport-level code (or `.cancelled`) and never
/// inspects the status: non-2xx responses are returned, not thrown; the ``Client`` decides.
///
/// ```swift
/// struct EchoTransport: Transport {
///     func send(_ request: PreparedRequest) async throws -> RawResponse {
///         RawResponse(status: .ok, headers: [:], body: request.body ?? Data(), url: request.url)
///     }
/// }
/// ```
public protocol Transport: Sendable {
    /// Performs the exchange.
    /// - Parameter request: A validated request; nothing downstream re-validates it.
    /// - Returns: The response, whatever its status.
    /// - Throws: ``CurlewError`` with a transport code, or `.cancelled` when the task is cancelled.
    func send(_ request: PreparedRequest) async throws -> RawResponse
}
