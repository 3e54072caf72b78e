/// One step of the onion between an ``APIClient`` and its ``Transport``: raw request in, raw
/// response out — the shape of swift-openapi-runtime's `ClientMiddleware`.
///
/// A middleware sees every prepared request on its way in and every raw response (status,
/// headers, bytes) or error on its way out. It may change the request, call `next` zero, one or
/// several times, or answer itself — from stored bytes, say — without calling `next`:
///
/// ```swift
/// struct Timing: APIMiddleware {
///     func intercept(
///         _ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext
///     ) async throws -> RawResponse {
///         let started = ContinuousClock.now
///         defer { context.logger.debug("\(request.summary) took \(ContinuousClock.now - started)") }
///         return try await next(request, context)       // everything inside runs here
///     }
/// }
/// ```
///
/// **Order.** The first registered sees the request first and the response last: client-wide
/// middleware (``ClientConfiguration/middleware``) come first, then the call's own
/// (``RequestOptions/middleware``). Built-in middleware have a ``phase``; wherever you register
/// them, the client places them in phase order — token refresh, hedging, limiter, circuit breaker, retry, failover, URL rewrite,
/// authorization, common arguments, server clock, signing last — so a stale token is never
/// resent and a signature always covers what is sent. Your own middleware keep their place.
///
/// **What comes back.** Innermost, below every middleware, the client checks the status
/// (``Endpoint/accepts(_:)``) and the endpoint's ``Endpoint/envelope`` and *throws* a typed
/// ``/CurlewCore/CurlewError`` for an unacceptable status or a business error, so retry and token refresh
/// see them. Decoding (key path, lenient, polymorphic, validation, ``Endpoint/didReceive(_:)``)
/// runs once, after the whole chain, on whatever bytes came back — from the network or from a
/// middleware that answered itself. Calling `next` again (retry, refresh) reruns everything
/// inside, so signatures and auth headers are recomputed on each attempt.
///
/// An error a middleware throws leaves the call as a ``/CurlewCore/CurlewError`` whose
/// ``/CurlewCore/CurlewError/stage`` names the middleware's ``kind``.
public protocol APIMiddleware: Sendable {
    /// The kind a call names to skip this middleware. Default: the type's name.
    var kind: MiddlewareKind { get }
    /// Where a built-in middleware belongs in the chain; `nil` (the default) keeps the place it
    /// was registered at.
    var phase: MiddlewarePhase? { get }
    /// What the middleware contributes that the client must know (trusted origins, a credential
    /// source, server time, mocks, a cache). Default: ``MiddlewareCapabilities/none``.
    var capabilities: MiddlewareCapabilities { get }

    /// Handles one request.
    /// - Parameters:
    ///   - request: The prepared request; pass it (or a changed copy) to `next`.
    ///   - context: Per-call facts (id, attempt, identity, options, credential, logger); pass it
    ///     on to `next`.
    ///   - next: The rest of the chain.
    /// - Returns: The raw response, usually what `next` returned.
    /// - Throws: Usually a ``/CurlewCore/CurlewError``.
    ///
    /// The requirement is `nonisolated(nonsending)`: the chain runs on the executor of the call
    /// (which has left the caller's actor), so passing a request from one layer to the next is a
    /// plain call, not a change of executor. Curlew's own middleware are declared that way. An
    /// implementation written as a plain `async` function satisfies the requirement too; it then
    /// runs on the global concurrent executor, as before.
    nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse
}

extension APIMiddleware {
    /// The type's name.
    public var kind: MiddlewareKind { MiddlewareKind(String(describing: Self.self)) }
    /// No phase: the middleware stays where it was registered.
    public var phase: MiddlewarePhase? { nil }
    /// No capability the client must know of.
    public var capabilities: MiddlewareCapabilities { .none }
}

/// The rest of the chain, as seen by an ``APIMiddleware``. It runs on its caller's executor
/// (`nonisolated(nonsending)`), so calling it does not change executor.
public typealias MiddlewareNext = nonisolated(nonsending) @Sendable (PreparedRequest, MiddlewareContext) async throws -> RawResponse
