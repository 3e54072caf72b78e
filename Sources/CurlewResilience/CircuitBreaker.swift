/// One origin's circuit breaker, as a value: outcomes go in with the time they happened, and it
/// says whether the next call may go out. It never reads a clock, so tests drive it with any
/// instants they like.
///
/// Closed, it counts successes and failures in a sliding window of ``CircuitBreakerMiddleware/Policy/window``
/// (in ten buckets); once the window holds at least ``CircuitBreakerMiddleware/Policy/minimumThroughput``
/// outcomes and the failures reach ``CircuitBreakerMiddleware/Policy/failureRatio`` of them, it
/// opens. Open, it refuses every call for ``CircuitBreakerMiddleware/Policy/breakDuration``; then the
/// next call is let through alone as a probe (half-open), and the others are refused until the
/// probe ends: a success closes the breaker (with an empty window), a failure opens it again, an
/// outcome that says nothing about the origin (a cancellation) lets the next call probe.
struct CircuitBreaker: Sendable {
    /// Whether a call may go out.
    enum Admission: Equatable, Sendable {
        /// Closed: the call goes out and its outcome is counted.
        case allowed
        /// Half-open: the call goes out alone; its outcome closes or opens the breaker.
        case probe
        /// Open (or a probe is out): the call fails without being sent; the next probe may go
        /// out after this long (zero while a probe is out).
        case refused(retryAfter: Duration)
    }

    /// What a call's outcome says about the origin.
    enum Outcome: Equatable, Sendable {
        /// The origin answered (any status below 500, a business error).
        case success
        /// The origin failed: no connection, a timeout, a reset, a 5xx.
        case failure
        /// Nothing about the origin: cancellation, the caller's deadline, a bad request.
        case ignored
    }

    /// One bucket of the sliding window.
    private struct Bucket: Sendable {
        var start: ContinuousClock.Instant
        var successes = 0
        var failures = 0
    }

    let policy: CircuitBreakerMiddleware.Policy
    private(set) var state: CircuitBreakerMiddleware.State = .closed
    /// Until when an open breaker refuses calls.
    private var openUntil: ContinuousClock.Instant?
    /// Whether a half-open breaker's probe is out.
    private var probing = false
    private var buckets: [Bucket] = []

    init(policy: CircuitBreakerMiddleware.Policy) {
        self.policy = policy
    }

    /// Failures and all counted outcomes in the window at `now`.
    func counts(at now: ContinuousClock.Instant) -> (failures: Int, total: Int) {
        var failures = 0
        var total = 0
        for bucket in buckets where now - bucket.start < policy.window {
            failures += bucket.failures
            total += bucket.successes + bucket.failures
        }
        return (failures, total)
    }

    /// Whether a call may go out at `now`; an open breaker whose break is over becomes half-open
    /// and lets this call probe.
    mutating func admit(at now: ContinuousClock.Instant) -> Admission {
        switch state {
        case .closed:
            return .allowed
        case .open:
            if let openUntil, now < openUntil { return .refused(retryAfter: openUntil - now) }
            state = .halfOpen
            probing = true
            return .probe
        case .halfOpen:
            if probing { return .refused(retryAfter: .zero) }
            probing = true
            return .probe
        }
    }

    /// Records the outcome of a call that ``admit(at:)`` let through as `admission`; returns the
    /// new state when it changed.
    mutating func record(_ outcome: Outcome, of admission: Admission, at now: ContinuousClock.Instant) -> CircuitBreakerMiddleware.State? {
        if admission == .probe, state == .halfOpen {
            probing = false
            switch outcome {
            case .success:
                state = .closed
                buckets.removeAll()
                return .closed
            case .failure:
                open(at: now)
                return .open
            case .ignored:
                return nil
            }
        }
        // A call let through while closed that ends after the breaker opened says nothing new.
        guard state == .closed, admission == .allowed, outcome != .ignored else { return nil }
        count(outcome, at: now)
        let (failures, total) = counts(at: now)
        guard total >= policy.minimumThroughput, Double(failures) >= policy.failureRatio * Double(total) else { return nil }
        open(at: now)
        return .open
    }

    private mutating func open(at now: ContinuousClock.Instant) {
        state = .open
        openUntil = now + policy.breakDuration
        buckets.removeAll()
    }

    private mutating func count(_ outcome: Outcome, at now: ContinuousClock.Instant) {
        let window = policy.window
        buckets.removeAll { now - $0.start >= window }
        let width = window / 10
        if buckets.last.map({ now - $0.start >= width }) ?? true { buckets.append(Bucket(start: now)) }
        if outcome == .failure { buckets[buckets.count - 1].failures += 1 } else { buckets[buckets.count - 1].successes += 1 }
    }
}
