public import Curlew
internal import Synchronization

/// Stops sending to an origin that keeps failing: a circuit breaker per origin
/// (`scheme://host:port`), or per origin and endpoint type (``Policy/perEndpointType``), shared
/// by every call of the clients it is registered with.
///
/// While an origin's breaker is closed, calls go out and their outcomes are counted in a sliding
/// window. Once the window holds at least ``Policy/minimumThroughput`` outcomes and
/// ``Policy/failureRatio`` of them are failures, the breaker opens: for ``Policy/breakDuration``
/// every call to that origin fails at once with `CurlewError.Code.circuitOpen` and nothing is
/// sent. Then one call goes out as a probe (half-open) while the others keep failing fast; its
/// success closes the breaker, its failure opens it for another break. The probe makes a single
/// connection attempt (the transport's connect retries are for calls, not for a question whose
/// answer is "still down"), unless its request sets `TransferOptions.maximumConnectAttempts`.
///
/// Only failures that say something about the origin count: no connection (refused, DNS, connect
/// timeout), a timeout, a reset or empty reply, and a status of 500 or above. A status below 500
/// counts as a success (the origin answered); a cancellation, the caller's deadline or a request
/// refused before sending does not count at all. A streamed body
/// (`APIClient.stream(_:highWaterMark:adjust:)`) is counted when it ends: a reset or a timeout in
/// mid-body is a failure; a probe is counted at its head.
///
/// Its phase, `MiddlewarePhase.circuitBreaker`, is outside `RetryMiddleware`: a call is one
/// outcome however many attempts it took, and an open breaker keeps retries from starting. It sees
/// the URL before `FailoverMiddleware` rewrites it, so with failover the breaker is the
/// primary origin's; with ``Policy/failsOverWhileOpen``, the calls it refuses go to the failover
/// origin instead of failing.
///
/// ```swift
/// let breaker = CircuitBreakerMiddleware(policy: .init(failureRatio: 0.5, minimumThroughput: 20, breakDuration: .seconds(5)))
/// let client = APIClient(configuration: ClientConfiguration(baseURL: "https://api.example.com", middleware: [breaker, RetryMiddleware()]))
/// ```
///
/// Transitions are published as `ClientEvent.Kind.circuitOpened`,
/// `ClientEvent.Kind.circuitHalfOpen` and `ClientEvent.Kind.circuitClosed` (with
/// `ClientEvent.origin`) by the call that caused them, and recorded as the gauge
/// `curlew_circuit_state` (0 closed, 1 half-open, 2 open; dimension `origin`) into that call's
/// metrics factory (`RequestOptions.instrumentation`); ``state(of:endpointType:)`` reads a breaker.
public final class CircuitBreakerMiddleware: APIMiddleware {
    /// When a breaker opens and for how long.
    public struct Policy: Sendable, Hashable {
        /// The share of failures in the window that opens the breaker: more than 0, at most 1.
        /// Another value (0, a negative one, more than 1, NaN) is refused: every call through the
        /// middleware fails with `CurlewError.Code.invalidConnectionSettings`, unsent. Default: 0.5.
        public var failureRatio: Double
        /// The fewest outcomes in the window before the breaker may open; fewer than 1 is refused
        /// like a bad ``failureRatio``. Default: 20.
        public var minimumThroughput: Int
        /// How far back outcomes count; zero or less is refused like a bad ``failureRatio``.
        /// Default: 30 s.
        public var window: Duration
        /// How long an open breaker refuses calls before it lets a probe through; zero lets the
        /// next call probe at once, a negative duration is refused like a bad ``failureRatio``.
        /// Default: 5 s.
        public var breakDuration: Duration
        /// Whether each endpoint type has a breaker of its own at an origin (one failing endpoint
        /// then does not stop the others); `false`: one breaker per origin. Default: `false`.
        public var perEndpointType: Bool
        /// Whether a call the open breaker refuses goes to the next base URL of the client's
        /// `FailoverMiddleware` instead of failing with `CurlewError.Code.circuitOpen`
        /// (it still fails so without a failover origin). Its outcome is not the breaker's.
        /// Default: `false`.
        public var failsOverWhileOpen: Bool

        /// Creates a policy. A value it cannot honour is kept as given and refused by the
        /// middleware (each call fails unsent), never changed in silence.
        public init(
            failureRatio: Double = 0.5, minimumThroughput: Int = 20, window: Duration = .seconds(30), breakDuration: Duration = .seconds(5),
            perEndpointType: Bool = false, failsOverWhileOpen: Bool = false
        ) {
            self.failureRatio = failureRatio
            self.minimumThroughput = minimumThroughput
            self.window = window
            self.breakDuration = breakDuration
            self.perEndpointType = perEndpointType
            self.failsOverWhileOpen = failsOverWhileOpen
        }
    }

    /// Where an origin's breaker stands.
    public enum State: Sendable, Hashable {
        /// Calls go out and are counted.
        case closed
        /// Calls fail at once with `CurlewError.Code.circuitOpen`.
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
    /// The error every call fails with, unsent, when ``policy`` has a setting it refuses.
    private let refusal: CurlewError?

    /// Creates the middleware. A ``Policy`` setting it refuses (see each setting) fails every
    /// call with `CurlewError.Code.invalidConnectionSettings` (stage `configuration`, naming the
    /// setting and its value) before anything is sent.
    public convenience init(policy: Policy = Policy()) {
        self.init(policy: policy, now: { .now })
    }

    /// Creates the middleware on a clock of the caller's (tests).
    init(policy: Policy, now: @escaping @Sendable () -> ContinuousClock.Instant) {
        self.policy = policy
        self.now = now
        var check = SettingCheck("CircuitBreakerMiddleware.Policy")
        check.require(policy.failureRatio > 0 && policy.failureRatio <= 1, "failureRatio", "more than 0 and at most 1", "\(policy.failureRatio)")
        check.require(policy.minimumThroughput >= 1, "minimumThroughput", "at least 1", "\(policy.minimumThroughput)")
        check.require(policy.window > .zero, "window", "longer than zero", "\(policy.window)")
        check.require(policy.breakDuration >= .zero, "breakDuration", "zero or longer", "\(policy.breakDuration)")
        self.refusal = check.refusal
    }

    /// `.circuitBreaker`.
    public var kind: MiddlewareKind { .circuitBreaker }

    /// `MiddlewarePhase.circuitBreaker`.
    public var phase: MiddlewarePhase? { .circuitBreaker }

    /// The state of the breaker of `url`'s origin (`.closed` for an origin never called, or a URL
    /// that is not http(s)); with ``Policy/perEndpointType``, of the calls of `endpointType` (the
    /// request type's name, `MiddlewareContext.requestName`) there.
    public func state(of url: String, endpointType: String? = nil) -> State {
        guard let origin = TrustedOrigins.origin(of: url) else { return .closed }
        let key = breakerKey(origin, endpointType: endpointType ?? "")
        return breakers.withLock { $0[key]?.state ?? .closed }
    }

    /// The breaker of a call: its origin's, or with ``Policy/perEndpointType`` its origin's and
    /// endpoint type's.
    private func breakerKey(_ origin: String, endpointType: String) -> String {
        policy.perEndpointType ? origin + " " + endpointType : origin
    }

    /// Sends when the origin's breaker lets the call through; fails with `.circuitOpen` otherwise.
    public nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        if let refusal { throw refusal }
        guard let origin = TrustedOrigins.origin(of: request.url) else { return try await next(request, context) }
        let key = breakerKey(origin, endpointType: context.requestName)
        let (admission, halfOpened) = breakers.withLock { breakers in
            var breaker = breakers[key] ?? CircuitBreaker(policy: policy)
            let before = breaker.state
            let admission = breaker.admit(at: now())
            breakers[key] = breaker
            let halfOpened = before == .open && breaker.state == .halfOpen
            if halfOpened { recordGauge(.halfOpen, origin: origin, context: context) }
            return (admission, halfOpened)
        }
        if halfOpened { report(.halfOpen, origin: origin, context: context) }
        if case .refused(let retryAfter) = admission {
            var refusal = CurlewError(
                code: .circuitOpen,
                message: "the circuit breaker of \(origin)\(policy.perEndpointType ? " for \(context.requestName)" : "") is open; nothing was sent"
                    + (retryAfter > .zero ? " (next probe in \(CallDeadline.milliseconds(retryAfter)) ms)" : " (a probe is out)"),
                request: request.summary)
            guard policy.failsOverWhileOpen else { throw refusal }
            refusal.stage = .middleware(.circuitBreaker)
            // To the next failover origin; the refusal stands unless FailoverMiddleware takes it.
            var diverted = context
            diverted.failoverStep = max(1, context.failoverStep)
            diverted.circuitRefusal = refusal
            return try await next(request, diverted)
        }
        var request = request
        if admission == .probe, request.options.maximumConnectAttempts == nil {
            // A probe asks whether the origin is back: one connection attempt answers that. The
            // transport's connect retries would hold the breaker half-open for their back-off.
            request.options.maximumConnectAttempts = 1
        }
        do {
            let raw = try await next(request, context)
            let outcome: CircuitBreaker.Outcome = raw.status.code >= 500 ? .failure : .success
            // A streamed body that the origin cuts off is a failure, known at the body's end. A
            // probe is answered by its head: the breaker does not stay half-open for a long body.
            guard outcome == .success, admission != .probe, case .stream(let body) = raw.content else {
                record(outcome, of: admission, key: key, origin: origin, context: context)
                return raw
            }
            let deadline = context.deadline
            body.whenEnded { end in
                let cutOff = end.error.map { Self.outcome(ofBodyEnd: $0, deadline: deadline) == .failure } ?? false
                self.record(cutOff ? .failure : .success, of: admission, key: key, origin: origin, context: context)
            }
            return raw
        } catch {
            record(Self.outcome(of: error), of: admission, key: key, origin: origin, context: context)
            throw error
        }
    }

    private func record(_ outcome: CircuitBreaker.Outcome, of admission: CircuitBreaker.Admission, key: String, origin: String, context: MiddlewareContext) {
        let changed = breakers.withLock { breakers in
            let changed = breakers[key]?.record(outcome, of: admission, at: now())
            if let changed { recordGauge(changed, origin: origin, context: context) }
            return changed
        }
        if let changed { report(changed, origin: origin, context: context) }
    }

    /// Records the breaker's state gauge. Called under the breakers' lock, so that two calls
    /// changing the state at once record it in the order they changed it.
    private func recordGauge(_ state: State, origin: String, context: MiddlewareContext) {
        OriginMeter.recordBreaker(state, origin: origin, endpointType: policy.perEndpointType ? context.requestName : nil, options: context.options)
    }

    private func report(_ state: State, origin: String, context: MiddlewareContext) {
        let kind: ClientEvent.Kind
        switch state {
        case .open: kind = .circuitOpened
        case .halfOpen: kind = .circuitHalfOpen
        case .closed: kind = .circuitClosed
        }
        context.logger.debug("circuit breaker: \(origin) is now \(state)")
        context.events.report(kind) { $0.origin = origin }
    }

    /// What an error says about the origin.
    /// ``outcome(of:)`` for the error a streamed body ended with. The attempt's total timeout is
    /// capped by the caller's deadline (``/Curlew/MiddlewareContext/deadline``): a timeout that
    /// fires once the deadline is (all but) reached is the caller's, not the origin's, and counts
    /// for nothing.
    static func outcome(ofBodyEnd error: any Error, deadline: ContinuousClock.Instant?) -> CircuitBreaker.Outcome {
        if let deadline, (error as? CurlewError)?.code == .totalTimeout, ContinuousClock.now + deadlineTolerance >= deadline { return .ignored }
        return outcome(of: error)
    }

    /// How early a deadline-capped timer may fire (timer granularity).
    private static let deadlineTolerance = Duration.milliseconds(5)

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
