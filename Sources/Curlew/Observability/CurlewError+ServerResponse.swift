public import HTTPTypes

extension CurlewError {
    /// The status a server should answer its own caller with when an upstream call failed with
    /// this error — one line in a route handler:
    ///
    /// ```swift
    /// catch let error as CurlewError {
    ///     throw HTTPError(error.serverResponseStatus, message: error.serverResponseMessage)   // Hummingbird
    /// }
    /// ```
    ///
    /// | The upstream call… | Status |
    /// | --- | --- |
    /// | timed out (connect, head, idle or total timeout) or ran out of its deadline (``/CurlewCore/CurlewError/Code/deadlineExceeded``) | `504 Gateway Timeout` |
    /// | found no usable stored answer where only the cache may answer (``/CurlewCore/CurlewError/Code/cacheMiss``: ``CachePolicy/cacheOnly(maxAge:)``, a request's `only-if-cached`) | `504 Gateway Timeout`, as RFC 9111 §5.2.1.7 says a cache answers |
    /// | failed because this client's transport is shutting down (``/CurlewCore/CurlewError/Code/shutdown``), the upstream's circuit breaker is open (``/CurlewCore/CurlewError/Code/circuitOpen``) or its concurrency limit was reached (``/CurlewCore/CurlewError/Code/concurrencyLimitExceeded``) | `503 Service Unavailable` |
    /// | failed otherwise: unreachable, TLS, reset, refused status, business error, undecodable body, refused credentials | `502 Bad Gateway` |
    /// | could not even be sent: the request is malformed, a fixture or configuration is missing (``/CurlewCore/CurlewError/Level/invalidRequest``) | `500 Internal Server Error` |
    ///
    /// The upstream's own status (``/CurlewCore/CurlewError/status``) is deliberately never passed through: a `404` or
    /// `401` from an upstream is not the service's caller's fault.
    public var serverResponseStatus: HTTPResponse.Status {
        switch code {
        case .connectTimeout, .totalTimeout, .idleTimeout, .headTimeout, .deadlineExceeded, .cacheMiss: .gatewayTimeout
        case .shutdown, .cancelled, .circuitOpen, .concurrencyLimitExceeded: .serviceUnavailable
        default: level == .invalidRequest ? .internalServerError : .badGateway
        }
    }

    /// A short message for the service's own error response that names neither the upstream's
    /// URL nor its body: `"upstream timed out"`, `"no stored answer"` (a cache miss where only
    /// the cache may answer), `"shutting down"`, `"upstream unavailable"` (its circuit breaker is
    /// open or its concurrency limit reached), `"upstream request failed"` or `"internal error"`.
    /// Log ``/CurlewCore/CurlewError/description`` (redacted) for the details.
    public var serverResponseMessage: String {
        if code == .circuitOpen || code == .concurrencyLimitExceeded { return "upstream unavailable" }
        if code == .cacheMiss { return "no stored answer" }
        return switch serverResponseStatus {
        case .gatewayTimeout: "upstream timed out"
        case .serviceUnavailable: "shutting down"
        case .internalServerError: "internal error"
        default: "upstream request failed"
        }
    }
}
