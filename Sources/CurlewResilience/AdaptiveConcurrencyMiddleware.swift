public import Curlew
internal import Synchronization

/// Limits how many calls go to an origin at once, with a limit that follows the origin's
/// latency (the algorithms of Netflix's concurrency-limits and Envoy's adaptive concurrency
/// filter, ``Policy/Algorithm``). By default the limit is a *gradient* one: it compares each
/// round of calls' latency with the origin's unloaded latency, measured in short probes at low
/// concurrency, and settles where latency has risen by about `1/(1 − 1/√limit)` (a third at
/// 16). ``Policy/Algorithm/aimd(latencyThreshold:backoff:)`` grows the limit by one while calls
/// end within a threshold and shrinks it by a factor when one takes longer or is dropped. A
/// call over the limit waits — up to ``Policy/maximumWaiting`` calls per origin, first come
/// first served — or, when no place is left, fails at once with
/// `CurlewError.Code.concurrencyLimitExceeded` and nothing is sent. A waiting call whose
/// deadline (`withDeadline(in:isolation:operation:)`) passes leaves the line with
/// `CurlewError.Code.deadlineExceeded`, also unsent.
///
/// A change of limit is published as `ClientEvent.Kind.concurrencyLimitChanged` and a shed call
/// as `ClientEvent.Kind.concurrencyShed` (both with `ClientEvent.origin` and
/// `ClientEvent.limit`); the calls' metrics factory (`RequestOptions.instrumentation`) gets
/// the gauges `curlew_concurrency_limit` and `curlew_concurrency_in_flight` and the counter
/// `curlew_concurrency_shed_total`, each with the dimension `origin`.
///
/// Beside the fixed named queues (`QueueActor`), which limit what you decide; this limits what
/// the origin can take. Its phase, `MiddlewarePhase.limiter`, is inside hedging and outside the
/// circuit breaker and retry: a call holds one slot for all its attempts. A streamed body
/// (`APIClient.stream(_:highWaterMark:adjust:)`) holds it until the body has ended — read to
/// its end, failed or cancelled — and its latency is the time to its head.
///
/// ```swift
/// let limiter = AdaptiveConcurrencyMiddleware(policy: .init(maximumWaiting: 100))
/// let aimd = AdaptiveConcurrencyMiddleware(policy: .init(initialLimit: 16, latencyThreshold: .milliseconds(250), maximumWaiting: 100))
/// ```
public final class AdaptiveConcurrencyMiddleware: APIMiddleware {
    /// How the limit moves.
    public struct Policy: Sendable, Hashable {
        /// The algorithm that moves an origin's limit.
        public enum Algorithm: Sendable, Hashable {
            /// Additive increase, multiplicative decrease: a call that ends within
            /// `latencyThreshold` while at least half the limit is in flight adds one to the
            /// limit; a call that takes longer or is dropped (a timeout, a reset, a 429 or 5xx)
            /// multiplies it by `backoff` (0.5…1). A `latencyThreshold` of zero or less or a
            /// `backoff` outside 0.5…1 is refused like a bad ``Policy/minimumLimit``. Simple, but with noisy latencies it swings
            /// rather than settles, and the threshold must be chosen per origin.
            case aimd(latencyThreshold: Duration = .seconds(1), backoff: Double = 0.9)
            /// The gradient limit (Envoy's gradient controller, Netflix's `Gradient2Limit`): needs
            /// no threshold, it learns the origin's unloaded latency. See ``Gradient``.
            case gradient(Gradient = Gradient())
        }

        /// How the gradient limit measures and moves.
        ///
        /// A *probe* pins the limit to ``probeConcurrency`` (never below the policy's minimum
        /// limit) until ``probeSamples`` calls that
        /// started during it have ended; the ``percentile`` of their latencies is the origin's
        /// unloaded latency, the *baseline*. A probe runs for an origin's first calls, again every
        /// ``probeInterval`` calls, and when the limit has sat at its minimum for five windows.
        /// Between probes, at the end of each window of `max(limit, minimumWindow)` calls, the
        /// window's latency (the same percentile) gives the gradient
        /// `baseline × (1 + tolerance) / latency`, clamped to 0.5…2 (0.5 when a call in the window
        /// was dropped), and the limit moves to `limit × gradient + √limit`, smoothed by
        /// ``smoothing``. It does not rise after a window in which the origin was never busy
        /// (fewer than half the limit in flight). Every interval is counted in calls: the limit
        /// reads no clock.
        ///
        /// A setting outside the range its documentation gives is refused like a bad
        /// ``Policy/minimumLimit``, never clamped.
        public struct Gradient: Sendable, Hashable {
            /// Where the baseline, the latency the origin has when it is not overloaded, comes
            /// from. `nil` (the default): measured in probes at low concurrency (Envoy's minimum
            /// RTT). A number of windows: an exponential average of the windows' latencies over
            /// about that many windows, cut by a tenth whenever it is more than twice the latest
            /// window's (Netflix's `Gradient2Limit`, which uses 30), with the gradient clamped to
            /// 0.5…1 — no probes and no pinned limit, but under sustained overload the average
            /// takes in the queueing it should detect, and the limit climbs again (BENCHMARKS.md,
            /// "Resilience"). At least 1 when set.
            public var averagedBaselineWindows: Int?
            /// The percentile (0…1) of a probe's or a window's latencies that stands for it.
            /// Default: 0.5.
            public var percentile: Double
            /// How much slower than the baseline latency may be before the gradient falls below
            /// one (0.1: 10%), besides the `√limit` headroom; zero or more. Default: 0.
            public var tolerance: Double
            /// How far the limit moves toward each window's new value (more than 0, at most 1; 1:
            /// all the way). Default: 0.2.
            public var smoothing: Double
            /// The limit during a probe; at least 1. Default: 3.
            public var probeConcurrency: Int
            /// Calls measured by a probe; at least 1. Default: 50.
            public var probeSamples: Int
            /// Calls between the end of one probe and the start of the next; at least 1.
            /// Default: 10,000.
            public var probeInterval: Int
            /// The fewest calls in a window; at least 1. Default: 10.
            public var minimumWindow: Int

            /// Creates the gradient limit's settings, as given (the middleware refuses one it
            /// cannot honour).
            public init(
                percentile: Double = 0.5, tolerance: Double = 0, smoothing: Double = 0.2, probeConcurrency: Int = 3, probeSamples: Int = 50, probeInterval: Int = 10_000,
                minimumWindow: Int = 10, averagedBaselineWindows: Int? = nil
            ) {
                self.averagedBaselineWindows = averagedBaselineWindows
                self.percentile = percentile
                self.tolerance = tolerance
                self.smoothing = smoothing
                self.probeConcurrency = probeConcurrency
                self.probeSamples = probeSamples
                self.probeInterval = probeInterval
                self.minimumWindow = minimumWindow
            }
        }

        /// The limit to start from, within ``minimumLimit``…``maximumLimit``: the initializer
        /// brings it there (`.init(maximumLimit: 10)` starts at 10); set outside them afterwards,
        /// it is refused like a bad ``minimumLimit``. Default: 20.
        public var initialLimit: Int
        /// The limit never falls below this; at least 1. A value the middleware refuses (here, or
        /// in any setting of the policy) fails every call through it with
        /// `CurlewError.Code.invalidConnectionSettings`, unsent. Default: 1.
        public var minimumLimit: Int
        /// The limit never rises above this; at least ``minimumLimit``, or refused like a bad
        /// ``minimumLimit``. Default: 1000.
        public var maximumLimit: Int
        /// How the limit moves. Default: `.gradient()`.
        public var algorithm: Algorithm
        /// Calls per origin that may wait for a slot; more fail at once. Zero or more; a negative
        /// number is refused like a bad ``minimumLimit``. Default: 0 (none wait).
        public var maximumWaiting: Int

        /// Creates a policy; the default algorithm is the gradient limit. Settings are kept as
        /// given (the middleware refuses one it cannot honour), except that `initialLimit` is
        /// brought within valid `minimumLimit`…`maximumLimit`.
        public init(initialLimit: Int = 20, minimumLimit: Int = 1, maximumLimit: Int = 1000, algorithm: Algorithm = .gradient(), maximumWaiting: Int = 0) {
            self.minimumLimit = minimumLimit
            self.maximumLimit = maximumLimit
            let bounded = minimumLimit >= 1 && maximumLimit >= minimumLimit
            self.initialLimit = bounded ? min(maximumLimit, max(minimumLimit, initialLimit)) : initialLimit
            self.algorithm = algorithm
            self.maximumWaiting = maximumWaiting
        }

        /// The first setting the middleware refuses, as the error its calls fail with.
        func refusal() -> CurlewError? {
            var check = SettingCheck("AdaptiveConcurrencyMiddleware.Policy")
            check.require(minimumLimit >= 1, "minimumLimit", "at least 1", "\(minimumLimit)")
            check.require(maximumLimit >= minimumLimit, "maximumLimit", "at least minimumLimit (\(minimumLimit))", "\(maximumLimit)")
            // The limits are computed in `Double`: past a million, they lose meaning and then bits.
            check.require(maximumLimit <= 1_000_000, "maximumLimit", "at most 1000000", "\(maximumLimit)")
            check.require(
                initialLimit >= minimumLimit && initialLimit <= maximumLimit, "initialLimit", "between minimumLimit and maximumLimit (\(minimumLimit)…\(maximumLimit))",
                "\(initialLimit)")
            check.require(maximumWaiting >= 0, "maximumWaiting", "zero or more", "\(maximumWaiting)")
            switch algorithm {
            case .aimd(let latencyThreshold, let backoff):
                check.require(latencyThreshold > .zero, "latencyThreshold", "longer than zero", "\(latencyThreshold)")
                check.require((0.5...1).contains(backoff), "backoff", "between 0.5 and 1", "\(backoff)")
            case .gradient(let gradient):
                check.require((0...1).contains(gradient.percentile), "Gradient.percentile", "between 0 and 1", "\(gradient.percentile)")
                check.require(gradient.tolerance >= 0 && gradient.tolerance.isFinite, "Gradient.tolerance", "zero or more", "\(gradient.tolerance)")
                check.require(gradient.smoothing > 0 && gradient.smoothing <= 1, "Gradient.smoothing", "more than 0 and at most 1", "\(gradient.smoothing)")
                check.require(gradient.probeConcurrency >= 1, "Gradient.probeConcurrency", "at least 1", "\(gradient.probeConcurrency)")
                check.require(gradient.probeSamples >= 1, "Gradient.probeSamples", "at least 1", "\(gradient.probeSamples)")
                check.require(gradient.probeInterval >= 1, "Gradient.probeInterval", "at least 1", "\(gradient.probeInterval)")
                check.require(gradient.minimumWindow >= 1, "Gradient.minimumWindow", "at least 1", "\(gradient.minimumWindow)")
                if let windows = gradient.averagedBaselineWindows {
                    check.require((1...1_000_000).contains(windows), "Gradient.averagedBaselineWindows", "between 1 and 1000000", "\(windows)")
                }
            }
            return check.refusal
        }

        /// Creates an AIMD policy: `.aimd(latencyThreshold: latencyThreshold, backoff: backoff)`.
        public init(
            initialLimit: Int = 20, minimumLimit: Int = 1, maximumLimit: Int = 1000, latencyThreshold: Duration, backoff: Double = 0.9, maximumWaiting: Int = 0
        ) {
            self.init(
                initialLimit: initialLimit, minimumLimit: minimumLimit, maximumLimit: maximumLimit, algorithm: .aimd(latencyThreshold: latencyThreshold, backoff: backoff),
                maximumWaiting: maximumWaiting)
        }
    }

    /// One origin: its limit and the calls waiting for a slot.
    private struct Origin: Sendable {
        var limit: AdaptiveLimit
        var waiters: [(id: UInt64, continuation: CheckedContinuation<Int, any Error>)] = []
    }

    private struct State: Sendable {
        var origins: [String: Origin] = [:]
        var nextWaiter: UInt64 = 0
    }

    /// The policy of every origin's limit.
    public let policy: Policy
    /// Limits and waiters by origin (`scheme://host:port`), guarded by the mutex; continuations are
    /// resumed after it is unlocked.
    private let state = Mutex(State())
    /// The error every call fails with, unsent, when ``policy`` has a setting it refuses.
    private let refusal: CurlewError?

    /// Creates the middleware. A ``Policy`` setting it refuses (see each setting) fails every
    /// call with `CurlewError.Code.invalidConnectionSettings` (stage `configuration`, naming the
    /// setting and its value) before anything is sent.
    public init(policy: Policy = Policy()) {
        self.policy = policy
        self.refusal = policy.refusal()
    }

    /// `.limiter`.
    public var kind: MiddlewareKind { .limiter }

    /// `MiddlewarePhase.limiter`.
    public var phase: MiddlewarePhase? { .limiter }

    /// The current limit for `url`'s origin (``Policy/initialLimit`` for an origin never called).
    public func limit(of url: String) -> Int {
        guard let origin = TrustedOrigins.origin(of: url) else { return policy.initialLimit }
        return state.withLock { $0.origins[origin]?.limit.capacity ?? policy.initialLimit }
    }

    /// Calls holding a slot at `url`'s origin.
    func inFlight(at url: String) -> Int {
        guard let origin = TrustedOrigins.origin(of: url) else { return 0 }
        return state.withLock { $0.origins[origin]?.limit.inFlight ?? 0 }
    }

    /// Calls waiting for a slot at `url`'s origin.
    func waiting(at url: String) -> Int {
        guard let origin = TrustedOrigins.origin(of: url) else { return 0 }
        return state.withLock { $0.origins[origin]?.waiters.count ?? 0 }
    }

    /// Sends once the origin has a free slot; waits or fails with `.concurrencyLimitExceeded`.
    public nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        if let refusal { throw refusal }
        guard let origin = TrustedOrigins.origin(of: request.url) else { return try await next(request, context) }
        let generation = try await acquire(origin, request: request, context: context)
        let started = ContinuousClock.now
        do {
            let raw = try await next(request, context)
            let latency = ContinuousClock.now - started
            let dropped = raw.status.code == 429 || raw.status.code >= 500
            guard case .stream(let body) = raw.content else {
                release(origin, latency: latency, dropped: dropped, generation: generation, context: context)
                return raw
            }
            // A streamed body still comes from the origin: the call keeps its slot until the body
            // ends. Its latency is the head's (a long body says nothing about the origin's load),
            // and a body cut off by the origin counts as dropped.
            let deadline = context.deadline
            body.whenEnded { end in
                let cutOff = end.error.map { CircuitBreakerMiddleware.outcome(ofBodyEnd: $0, deadline: deadline) == .failure } ?? false
                self.release(origin, latency: latency, dropped: dropped || cutOff, generation: generation, context: context)
            }
            return raw
        } catch {
            switch CircuitBreakerMiddleware.outcome(of: error) {
            case .failure: release(origin, latency: .now - started, dropped: true, generation: generation, context: context)
            case .success:
                release(origin, latency: .now - started, dropped: (error as? CurlewError)?.status?.code == 429, generation: generation, context: context)
            case .ignored: release(origin, latency: nil, dropped: false, generation: generation, context: context)
            }
            throw error
        }
    }

    /// Takes a slot, waiting in line when the policy allows; returns the limit's generation the
    /// call starts in (``AdaptiveLimit/generation``).
    private nonisolated(nonsending) func acquire(_ origin: String, request: PreparedRequest, context: MiddlewareContext) async throws -> Int {
        let fresh = AdaptiveLimit(policy: policy)
        let taken = state.withLock { state -> Int? in
            guard state.origins[origin, default: Origin(limit: fresh)].limit.acquire() else { return nil }
            Self.record(state.origins[origin]?.limit, origin: origin, options: context.options)
            return state.origins[origin]?.limit.generation ?? 0
        }
        if let taken { return taken }
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let maximumWaiting = policy.maximumWaiting
        let deadline = CallDeadline.current
        var alarm: Task<Void, Never>?
        defer { alarm?.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Int, any Error>) in
                enum Decision {
                    case go(Int)
                    case wait
                    case shed(Int)
                    case cancelled
                }
                let decision: Decision = state.withLock { state in
                    if Task.isCancelled { return .cancelled }
                    if state.origins[origin, default: Origin(limit: fresh)].limit.acquire() {
                        Self.record(state.origins[origin]?.limit, origin: origin, options: context.options)
                        return .go(state.origins[origin]?.limit.generation ?? 0)
                    }
                    // A gradient probe sheds nothing the limit itself would let through: calls
                    // it holds back wait for it besides the policy's places in line.
                    guard let entry = state.origins[origin], entry.waiters.count - entry.limit.heldBack < maximumWaiting else {
                        return .shed(state.origins[origin]?.limit.capacity ?? 0)
                    }
                    state.origins[origin]?.waiters.append((id, continuation))
                    return .wait
                }
                switch decision {
                case .go(let generation): continuation.resume(returning: generation)
                case .wait:
                    // The deadline takes the waiter out of line as cancellation does.
                    guard let deadline else { break }
                    let summary = request.summary
                    alarm = CallDeadline.alarm(at: deadline) {
                        self.removeWaiter(id, at: origin)?
                            .resume(throwing: CallDeadline.exceededWhileWaiting(for: "a slot under \(origin)'s adaptive limit", request: summary))
                    }
                case .cancelled: continuation.resume(throwing: CancellationError())
                case .shed(let limit):
                    context.events.report(.concurrencyShed) {
                        $0.origin = origin
                        $0.limit = limit
                    }
                    OriginMeter.recordShed(origin: origin, options: context.options)
                    continuation.resume(
                        throwing: CurlewError(
                            code: .concurrencyLimitExceeded,
                            message: "\(origin) has \(limit) calls in flight, its adaptive limit, and \(maximumWaiting) waiting; nothing was sent",
                            request: request.summary))
                }
            }
        } onCancel: {
            removeWaiter(id, at: origin)?.resume(throwing: CancellationError())
        }
    }

    /// Takes a waiter that gives up (cancelled, or its deadline passed) out of line; `nil` when it
    /// no longer waits (it was let in).
    private func removeWaiter(_ id: UInt64, at origin: String) -> CheckedContinuation<Int, any Error>? {
        state.withLock { state in
            guard let index = state.origins[origin]?.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.origins[origin]?.waiters.remove(at: index).continuation
        }
    }

    /// Gives a slot back, adjusts the limit and lets waiters in while slots are free.
    private func release(_ origin: String, latency: Duration?, dropped: Bool, generation: Int, context: MiddlewareContext) {
        let (admitted, before, after) = state.withLock { state -> ([(CheckedContinuation<Int, any Error>, Int)], AdaptiveLimit?, AdaptiveLimit?) in
            guard var entry = state.origins[origin] else { return ([], nil, nil) }
            let before = entry.limit
            entry.limit.release(latency: latency, dropped: dropped, generation: generation)
            var admitted: [(CheckedContinuation<Int, any Error>, Int)] = []
            while !entry.waiters.isEmpty, entry.limit.acquire() { admitted.append((entry.waiters.removeFirst().continuation, entry.limit.generation)) }
            state.origins[origin] = entry
            Self.record(entry.limit, origin: origin, options: context.options)
            return (admitted, before, entry.limit)
        }
        for (continuation, generation) in admitted { continuation.resume(returning: generation) }
        guard let before, let after else { return }
        if after.capacity != before.capacity {
            context.logger.debug("adaptive limit: \(origin) now allows \(after.capacity) calls at once")
            context.events.report(.concurrencyLimitChanged) {
                $0.origin = origin
                $0.limit = after.capacity
            }
        }
    }

    /// Records the gauges of `limit`. Called under the state's lock, so that two calls releasing
    /// at once record their values in the order they changed the state, and the gauges end on
    /// the current value.
    private static func record(_ limit: AdaptiveLimit?, origin: String, options: RequestOptions) {
        guard let limit else { return }
        OriginMeter.recordLimit(limit.capacity, inFlight: limit.inFlight, origin: origin, options: options)
    }
}
