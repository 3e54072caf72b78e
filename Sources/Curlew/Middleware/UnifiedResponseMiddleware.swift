/// Unified response processing: every response is read through a ``ResponseEnvelope``. A success
/// code unwraps the payload for decoding; any other code fails with a `.serverError`
/// ``CurlewError`` carrying the code (``CurlewError/businessCode``), the message to show a user
/// (``CurlewError/message``) and a body snippet. A body that is not such an envelope is a
/// data-format error.
///
/// A request opts out with `skippedMiddleware: [.unifiedResponse]` and gets the raw body
/// (LCNetwork's `ignoreUnifiedResponseProcess`). Middleware registered before this one see the
/// business errors (token refresh on code 801, for example).
public struct UnifiedResponseMiddleware: APIMiddleware {
    /// The envelope every response is read through.
    public var envelope: ResponseEnvelope

    /// Creates the middleware.
    public init(envelope: ResponseEnvelope = .codeMsgData) {
        self.envelope = envelope
    }

    /// `.unifiedResponse`.
    public var kind: MiddlewareKind { .unifiedResponse }

    /// Tells the innermost step to unwrap the envelope.
    public func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> MiddlewareResponse {
        var context = context
        context.envelope = envelope
        return try await next(request, context)
    }
}
