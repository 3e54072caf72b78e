internal import Synchronization

/// Stops sending to an origin that keeps failing: a circuit breaker per origin
/// (`scheme://host:port`), shared by every call of the clients it is registered with.
///
/// While an origin's breaker is closed, calls go out and their outcomes are counted in a sliding
/// window. Once the window holds at least ``Policy/minimumThroughput`` outcomes and
/// ``Policy/failureRatio`` of them are failures, the breaker opens: for ``Policy/breakDuration``
/// every call to that origin fails at once with ``CurlewError/Code/circuitOpen`` and nothing is
/// sent. Then one call goes out as a probe (half-open) while the others keep failing fast; its
/// success closes the breaker, its failure opens it for another break.
///
/// Only failures that say something about the origin count: no connection (refused, DNS, connect
/// timeout), a timeout, a reset or empty reply, and a status of 500 or above. A status below 500
/// counts as a success (the origin answered); a cancellation, the caller's deadline or a request
/// refused before sending does not count at all.
///
/// Its phase, ``MiddlewarePhase/circuitBreaker``, is outside ``RetryMiddleware``: a call is one
/// outcome however many attempts it took, and an open breaker keeps retries from starting. It sees
/// the URL before ``FailoverMiddleware`` rewrites it, so with failover the breaker is the
/// primary origin's.
///
/// ```swift
/// let breaker = CircuitBreakerMiddleware(policy: .init(failureRatio: 0.5, minimumThroughput: 20, breakDuration: .seconds(5)))
/// let client = APIClient(configuration: ClientConfiguration(baseURL: "https://api.example.com", middleware: [breaker, RetryMiddleware()]))
/// ```
///
/// Transitions are published as ``ClientEvent/Kind/circuitOpened``,
/// ``ClientEvent/Kind/circuitHalfOpen`` and ``ClientEvent/Kind/circuitClosed`` (with
/// ``ClientEvent/origin``) by the call that caused them, and recorded as the gauge
/// `curlew_circuit_state` (0 closed, 1 half-open, 2 open; dimension `origin`) into that call's
/// metrics factory (``RequestOptions/instrumentation``); ``state(of:)`` reads a breaker.
public final class CircuitBreakerMiddleware: APIMiddleware {
    /// When a breaker opens and for how long.
    public struct Policy: Sendable, Hashable {
        /// The share of failures in the window (0…1) that opens the breaker. Default: 0.5.
        public var failureRatio: Double
        /// The fewest outcomes in the window before the breaker may open. Default: 20.
        public var minimumThroughput: Int
        /// How far back outcomes count. Default: 30 s.
        public var window: Duration
        /// How long an open breaker refuses calls before it lets a probe through. Default: 5 s.
        public var breakDuration: Duration

        /// Creates a policy.
        public init(failureRatio: Double = 0.5, minimumThroughput: Int = 20, window: Duration = .seconds(30), breakDuration: Duration = .seconds(5)) {
            self.failureRatio = min(1, max(0, failureRatio))
            self.minimumThroughput = max(1, minimumThroughput)
            self.window = window > .zero ? window : .seconds(30)
            self.breakDuration = breakDuration
        }
    }

    /// Where an origin's breaker stands.
    public enum State: Sendable, Hashable {
        /// Calls go out and are counted.
        case closed
        /// Calls fail at once with ``CurlewError/Code/circuitOpen``.
        case open
        /// One probe is (or may go) out; the other calls fail at once.
        case halfOpen
    }

    /// The policy of every origin's breaker.
    public let policy: Policy
    /// The breakers by origin (`scheme://host:port`), guarded by the mutex.
    private let breakers = Mutex<[String: CircuitBreaker]>([:])
    /// The clock the breakers are driven by (a test's own in tests).
    private let now: @Sendable () -> ContinuousClock.Instant

    /// Creates the middleware.
    public convenience init(policy: Policy = Policy()) {
        self.init(policy: policy, now: { .now })
    }

    /// Creates the middleware on a clock of the caller's (tests).
    init(policy: Policy, now: @escaping @Sendable () -> ContinuousClock.Instant) {
        self.policy = policy
        self.now = now
    }

    /// `.circuitBreaker`.
    public var kind: MiddlewareKind { .circuitBreaker }

    /// ``MiddlewarePhase/circuitBreaker``.
    public var phase: MiddlewarePhase? { .circuitBreaker }

    /// The state of the breaker of `url`'s origin (`.closed` for an origin never called, or a URL
    /// that is not http(s)).
    public func state(of url: String) -> State {
        guard let origin = TrustedOrigins.origin(of: url) else { return .closed }
        return breakers.withLock { $0[origin]?.state ?? .closed }
    }

    /// Sends when the origin's breaker lets the call through; fails with `.circuitOpen` otherwise.
    public nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        guard let origin = TrustedOrigins.origin(of: request.url) else { return try await next(request, context) }
        let (admission, halfOpened) = breakers.withLock { breakers in
            var breaker = breakers[origin] ?? CircuitBreaker(policy: policy)
            let before = breaker.state
            let admission = breaker.admit(at: now())
            breakers[origin] = breaker
            return (admission, before == .open && breaker.state == .halfOpen)
        }
        if halfOpened { Self.report(.halfOpen, origin: origin, context: context) }
        if case .refused(let retryAfter) = admission {
            throw CurlewError(
                code: .circuitOpen,
                message: "the circuit breaker of \(origin) is open; nothing was sent"
                    + (retryAfter > .zero ? " (next probe in \(CallDeadline.milliseconds(retryAfter)) ms)" : " (a probe is out)"),
                request: request.summary)
        }
        do {
            let raw = try await next(request, context)
            record(raw.status.code >= 500 ? .failure : .success, of: admission, origin: origin, context: context)
            return raw
        } catch {
            record(Self.outcome(of: error), of: admission, origin: origin, context: context)
            throw error
        }
    }

    private func record(_ outcome: CircuitBreaker.Outcome, of admission: CircuitBreaker.Admission, origin: String, context: MiddlewareContext) {
        let changed = breakers.withLock { breakers in breakers[origin]?.record(outcome, of: admission, at: now()) }
        if let changed { Self.report(changed, origin: origin, context: context) }
    }

    private static func report(_ state: State, origin: String, context: MiddlewareContext) {
        let kind: ClientEvent.Kind
        switch state {
        case .open: kind = .circuitOpened
        case .halfOpen: kind = .circuitHalfOpen
        case .closed: kind = .circuitClosed
        }
        context.logger.debug("circuit breaker: \(origin) is now \(state)")
        OriginMeter.recordBreaker(state, origin: origin, options: context.options)
        context.events.report(kind) { $0.origin = origin }
    }

    /// What an error says about the origin.
    static func outcome(of error: any Error) -> CircuitBreaker.Outcome {
        guard let error = error as? CurlewError else { return .ignored }
        if FailoverMiddleware.isConnectLevel(error.code) { return .failure }
        switch error.code {
        case .totalTimeout, .headTimeout, .idleTimeout, .connectionReset, .emptyReply, .connectionClosedBeforeResponse:
            return .failure
        case .unacceptableStatus:
            guard let status = error.status else { return .ignored }
            return status.code >= 500 ? .failure : .success
        case .serverError:
            return .success
        default:
            return .ignored
        }
    }
}
