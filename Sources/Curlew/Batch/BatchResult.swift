/// The outcome of ``APIClient/batch(_:options:onEach:)``: one result per request, in input order.
public struct BatchResult<R: Endpoint>: Sendable {
    /// The requests, in input order.
    public let requests: [R]
    /// Each request's result, at the same index: the value, a ``/CurlewCore/CurlewError``, or
    /// `CancellationError` for a member that was cancelled (the batch's task was, or a fail-fast
    /// batch stopped it) — cancellation is spelled the same as everywhere else in Curlew.
    public let results: [Result<R.Response, any Error>]

    /// The requests that failed, in input order.
    public var failedRequests: [R] {
        zip(requests, results).compactMap { request, result in
            if case .failure = result { return request }
            return nil
        }
    }

    /// The failures with their indices, in input order.
    public var failures: [(index: Int, error: any Error)] {
        results.enumerated().compactMap { index, result in
            if case .failure(let error) = result { return (index, error) }
            return nil
        }
    }

    /// The successful values, in input order.
    public var values: [R.Response] {
        results.compactMap { try? $0.get() }
    }

    /// Whether every request succeeded.
    public var allSucceeded: Bool { failures.isEmpty }
}
