/// One origin's adaptive concurrency limit, as a value: the slots in use and the limit, which
/// moves by the policy's ``AdaptiveConcurrencyMiddleware/Policy/algorithm``.
///
/// - `.aimd`, as in Netflix's concurrency-limits: a call that ends in time, while the origin was
///   busy (at least half the limit in flight), adds one to the limit; a call that was dropped (a
///   timeout, a reset, a 429 or 5xx) or took longer than the latency threshold multiplies it by
///   the backoff. So the limit climbs while latency stays low and falls as soon as the origin
///   queues.
/// - `.gradient`: a ``GradientLimit``, which compares each window's latency with the origin's
///   unloaded latency.
///
/// It never reads a clock: latencies come in measured.
struct AdaptiveLimit: Sendable {
    /// The algorithm's state.
    private enum Algorithm: Sendable {
        /// AIMD's limit, fractional so repeated backoffs stay proportional.
        case aimd(limit: Double, latencyThreshold: Duration, backoff: Double)
        case gradient(GradientLimit)
    }

    let policy: AdaptiveConcurrencyMiddleware.Policy
    private var algorithm: Algorithm
    /// Calls holding a slot.
    private(set) var inFlight = 0

    /// A limit at the policy's initial limit; the policy is one ``AdaptiveConcurrencyMiddleware``
    /// accepts (it refuses the others before a call takes a slot), so the limit stays within
    /// ``AdaptiveConcurrencyMiddleware/Policy/minimumLimit``…``AdaptiveConcurrencyMiddleware/Policy/maximumLimit``.
    init(policy: AdaptiveConcurrencyMiddleware.Policy) {
        self.policy = policy
        switch policy.algorithm {
        case .aimd(let latencyThreshold, let backoff):
            algorithm = .aimd(limit: Double(policy.initialLimit), latencyThreshold: latencyThreshold, backoff: backoff)
        case .gradient(let options):
            algorithm = .gradient(
                GradientLimit(options: options, initialLimit: policy.initialLimit, minimumLimit: policy.minimumLimit, maximumLimit: policy.maximumLimit))
        }
    }

    /// The limit, fractional (the gradient's limit between probes).
    var limit: Double {
        switch algorithm {
        case .aimd(let limit, _, _): limit
        case .gradient(let gradient): gradient.limit
        }
    }

    /// The gradient limit's state; `nil` under AIMD.
    var gradient: GradientLimit? {
        guard case .gradient(let gradient) = algorithm else { return nil }
        return gradient
    }

    /// The generation a call that takes a slot now starts in (the gradient's probes); 0 under AIMD.
    var generation: Int { gradient?.generation ?? 0 }

    /// The whole number of calls allowed at once.
    var capacity: Int {
        switch algorithm {
        case .aimd(let limit, _, _): Int(limit)
        case .gradient(let gradient): gradient.capacity
        }
    }

    /// Slots a gradient probe holds back: the limit between probes less the probe's concurrency
    /// (0 under AIMD and between probes). Calls up to this many wait for the probe to end
    /// rather than being shed.
    var heldBack: Int {
        guard let gradient, gradient.probing else { return 0 }
        return max(0, gradient.steadyCapacity - gradient.capacity)
    }

    /// Takes a slot when one is free.
    mutating func acquire() -> Bool {
        guard inFlight < capacity else { return false }
        inFlight += 1
        return true
    }

    /// Gives a slot back, adjusting the limit by how the call went: `latency` `nil` for a call
    /// whose outcome says nothing about the origin (cancelled); `generation` the ``generation``
    /// it started in (the current one when `nil`).
    mutating func release(latency: Duration?, dropped: Bool, generation started: Int? = nil) {
        let busy = inFlight * 2 >= capacity
        inFlight = max(0, inFlight - 1)
        guard let latency else { return }
        switch algorithm {
        case .aimd(var limit, let latencyThreshold, let backoff):
            if dropped || latency > latencyThreshold {
                limit = max(Double(policy.minimumLimit), limit * backoff)
            } else if busy {
                limit = min(Double(policy.maximumLimit), limit + 1)
            }
            algorithm = .aimd(limit: limit, latencyThreshold: latencyThreshold, backoff: backoff)
        case .gradient(var gradient):
            gradient.record(latency: latency, dropped: dropped, busy: busy, generation: started ?? gradient.generation)
            algorithm = .gradient(gradient)
        }
    }
}
