internal import Synchronization

/// Limits how many calls go to an origin at once, with a limit that follows the origin's
/// latency (AIMD, as in Netflix's concurrency-limits and Envoy's adaptive concurrency filter):
/// it grows by one while calls end within ``Policy/latencyThreshold`` with the origin busy, and
/// shrinks by ``Policy/backoff`` when a call takes longer or is dropped (a timeout, a reset, a
/// 429 or 5xx). A call over the limit waits — up to ``Policy/maximumWaiting`` calls per origin,
/// first come first served — or, when no place is left, fails at once with
/// ``CurlewError/Code/concurrencyLimitExceeded`` and nothing is sent. A waiting call whose
/// deadline (``withDeadline(in:isolation:operation:)``) passes leaves the line with
/// ``CurlewError/Code/deadlineExceeded``, also unsent.
///
/// A change of limit is published as ``ClientEvent/Kind/concurrencyLimitChanged`` and a shed call
/// as ``ClientEvent/Kind/concurrencyShed`` (both with ``ClientEvent/origin`` and
/// ``ClientEvent/limit``); the calls' metrics factory (``RequestOptions/instrumentation``) gets
/// the gauges `curlew_concurrency_limit` and `curlew_concurrency_in_flight` and the counter
/// `curlew_concurrency_shed_total`, each with the dimension `origin`.
///
/// Beside the fixed named queues (``QueueActor``), which limit what you decide; this limits what
/// the origin can take. Its phase, ``MiddlewarePhase/limiter``, is inside hedging and outside the
/// circuit breaker and retry: a call holds one slot for all its attempts.
///
/// ```swift
/// let limiter = AdaptiveConcurrencyMiddleware(policy: .init(initialLimit: 16, latencyThreshold: .milliseconds(250), maximumWaiting: 100))
/// ```
public final class AdaptiveConcurrencyMiddleware: APIMiddleware {
    /// How the limit moves.
    public struct Policy: Sendable, Hashable {
        /// The limit to start from. Default: 20.
        public var initialLimit: Int
        /// The limit never falls below this. Default: 1.
        public var minimumLimit: Int
        /// The limit never rises above this. Default: 1000.
        public var maximumLimit: Int
        /// A call that takes longer counts as a sign of overload. Default: 1 s.
        public var latencyThreshold: Duration
        /// What the limit is multiplied by on overload (0.5…1). Default: 0.9.
        public var backoff: Double
        /// Calls per origin that may wait for a slot; more fail at once. Default: 0 (none wait).
        public var maximumWaiting: Int

        /// Creates a policy.
        public init(
            initialLimit: Int = 20, minimumLimit: Int = 1, maximumLimit: Int = 1000, latencyThreshold: Duration = .seconds(1), backoff: Double = 0.9,
            maximumWaiting: Int = 0
        ) {
            self.minimumLimit = max(1, minimumLimit)
            self.maximumLimit = max(self.minimumLimit, maximumLimit)
            self.initialLimit = min(self.maximumLimit, max(self.minimumLimit, initialLimit))
            self.latencyThreshold = latencyThreshold
            self.backoff = min(1, max(0.5, backoff))
            self.maximumWaiting = max(0, maximumWaiting)
        }
    }

    /// One origin: its limit and the calls waiting for a slot.
    private struct Origin: Sendable {
        var limit: AdaptiveLimit
        var waiters: [(id: UInt64, continuation: CheckedContinuation<Void, any Error>)] = []
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

    /// Creates the middleware.
    public init(policy: Policy = Policy()) {
        self.policy = policy
    }

    /// `.limiter`.
    public var kind: MiddlewareKind { .limiter }

    /// ``MiddlewarePhase/limiter``.
    public var phase: MiddlewarePhase? { .limiter }

    /// The current limit for `url`'s origin (``Policy/initialLimit`` for an origin never called).
    public func limit(of url: String) -> Int {
        guard let origin = TrustedOrigins.origin(of: url) else { return policy.initialLimit }
        return state.withLock { $0.origins[origin]?.limit.capacity ?? policy.initialLimit }
    }

    /// Calls waiting for a slot at `url`'s origin.
    func waiting(at url: String) -> Int {
        guard let origin = TrustedOrigins.origin(of: url) else { return 0 }
        return state.withLock { $0.origins[origin]?.waiters.count ?? 0 }
    }

    /// Sends once the origin has a free slot; waits or fails with `.concurrencyLimitExceeded`.
    public nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        guard let origin = TrustedOrigins.origin(of: request.url) else { return try await next(request, context) }
        try await acquire(origin, request: request, context: context)
        let started = ContinuousClock.now
        do {
            let raw = try await next(request, context)
            release(origin, latency: .now - started, dropped: raw.status.code == 429 || raw.status.code >= 500, context: context)
            return raw
        } catch {
            switch CircuitBreakerMiddleware.outcome(of: error) {
            case .failure: release(origin, latency: .now - started, dropped: true, context: context)
            case .success: release(origin, latency: .now - started, dropped: (error as? CurlewError)?.status?.code == 429, context: context)
            case .ignored: release(origin, latency: nil, dropped: false, context: context)
            }
            throw error
        }
    }

    /// Takes a slot, waiting in line when the policy allows.
    private nonisolated(nonsending) func acquire(_ origin: String, request: PreparedRequest, context: MiddlewareContext) async throws {
        let fresh = AdaptiveLimit(policy: policy)
        let taken = state.withLock { state in
            guard state.origins[origin, default: Origin(limit: fresh)].limit.acquire() else { return false }
            Self.record(state.origins[origin]?.limit, origin: origin, options: context.options)
            return true
        }
        if taken { return }
        let id = state.withLock { state in
            state.nextWaiter += 1
            return state.nextWaiter
        }
        let maximumWaiting = policy.maximumWaiting
        let deadline = CallDeadline.current
        var alarm: Task<Void, Never>?
        defer { alarm?.cancel() }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                enum Decision {
                    case go, wait
                    case shed(Int)
                    case cancelled
                }
                let decision: Decision = state.withLock { state in
                    if Task.isCancelled { return .cancelled }
                    if state.origins[origin, default: Origin(limit: fresh)].limit.acquire() {
                        Self.record(state.origins[origin]?.limit, origin: origin, options: context.options)
                        return .go
                    }
                    guard let queued = state.origins[origin]?.waiters.count, queued < maximumWaiting else {
                        return .shed(state.origins[origin]?.limit.capacity ?? 0)
                    }
                    state.origins[origin]?.waiters.append((id, continuation))
                    return .wait
                }
                switch decision {
                case .go: continuation.resume()
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
    private func removeWaiter(_ id: UInt64, at origin: String) -> CheckedContinuation<Void, any Error>? {
        state.withLock { state in
            guard let index = state.origins[origin]?.waiters.firstIndex(where: { $0.id == id }) else { return nil }
            return state.origins[origin]?.waiters.remove(at: index).continuation
        }
    }

    /// Gives a slot back, adjusts the limit and lets waiters in while slots are free.
    private func release(_ origin: String, latency: Duration?, dropped: Bool, context: MiddlewareContext) {
        let (admitted, before, after) = state.withLock { state -> ([CheckedContinuation<Void, any Error>], AdaptiveLimit?, AdaptiveLimit?) in
            guard var entry = state.origins[origin] else { return ([], nil, nil) }
            let before = entry.limit
            entry.limit.release(latency: latency, dropped: dropped)
            var admitted: [CheckedContinuation<Void, any Error>] = []
            while !entry.waiters.isEmpty, entry.limit.acquire() { admitted.append(entry.waiters.removeFirst().continuation) }
            state.origins[origin] = entry
            Self.record(entry.limit, origin: origin, options: context.options)
            return (admitted, before, entry.limit)
        }
        for continuation in admitted { continuation.resume() }
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
