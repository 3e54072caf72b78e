extension CurlewError {
    /// Returns a `CurlewError` as it is; wraps cancellation as `.cancelled` and anything else as
    /// `.transportFailure` with the original as ``/CurlewCore/CurlewError/underlying``.
    /// - Parameters:
    ///   - error: Any error.
    ///   - request: The request to name when the error is wrapped (a `CurlewError` keeps its own).
    public static func wrapping(_ error: any Error, request: RequestSummary? = nil) -> CurlewError {
        if let error = error as? CurlewError { return error }
        if error is CancellationError {
            return CurlewError(code: .cancelled, message: request == nil ? "the task was cancelled" : "the request was cancelled", request: request, underlying: error)
        }
        return CurlewError(code: .transportFailure, message: "\(error)", request: request, underlying: error)
    }

    /// The error of a chain step, or of a batch member for the batch's accessory outcome — possibly
    /// the caller's own code: a `CurlewError` as it
    /// is, cancellation as `.cancelled`, anything else as `.operationFailed` (not
    /// `.transportFailure`: an error of the caller's code says nothing about the network).
    static func wrappingOperation(_ error: any Error) -> CurlewError {
        if error is CurlewError || error is CancellationError { return wrapping(error) }
        return CurlewError(code: .operationFailed, message: "\(error)", underlying: error)
    }

    /// Fills in what the code that threw could not know — the request, and the status, headers
    /// and body of the response — keeping whatever is already set.
    func completed(request summary: RequestSummary, response raw: RawResponse) -> CurlewError {
        var error = self
        if error.request == nil { error.request = summary }
        if error.status == nil { error.status = raw.status }
        if error.headers == nil { error.headers = raw.headers }
        if error.bodySnippet == nil { error.bodySnippet = CurlewError.snippet(of: raw.body) }
        if error.metrics == nil { error.metrics = raw.metrics }
        return error
    }
}
