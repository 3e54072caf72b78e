/// One origin's adaptive concurrency limit, as a value: AIMD, as in Netflix's concurrency-limits.
/// A call that ends in time, while the origin was busy (at least half the limit in flight), adds
/// one to the limit; a call that was dropped (a timeout, a reset, a 429 or 5xx) or took longer
/// than ``AdaptiveConcurrencyMiddleware/Policy/latencyThreshold`` multiplies it by
/// ``AdaptiveConcurrencyMiddleware/Policy/backoff``. So the limit climbs while latency stays
/// low and falls as soon as the origin queues, settling near the concurrency it serves well.
/// It never reads a clock: latencies come in measured.
struct AdaptiveLimit: Sendable {
    let policy: AdaptiveConcurrencyMiddleware.Policy
    /// The limit, fractional so repeated backoffs stay proportional.
    private(set) var limit: Double
    /// Calls holding a slot.
    private(set) var inFlight = 0

    init(policy: AdaptiveConcurrencyMiddleware.Policy) {
        self.policy = policy
        self.limit = Double(policy.initialLimit)
    }

    /// The whole number of calls allowed at once.
    var capacity: Int { max(policy.minimumLimit, Int(limit)) }

    /// Takes a slot when one is free.
    mutating func acquire() -> Bool {
        guard inFlight < capacity else { return false }
        inFlight += 1
        return true
    }

    /// Gives a slot back, adjusting the limit by how the call went: `latency` `nil` for a call
    /// whose outcome says nothing about the origin (cancelled).
    mutating func release(latency: Duration?, dropped: Bool) {
        let busy = inFlight * 2 >= capacity
        inFlight = max(0, inFlight - 1)
        guard let latency else { return }
        if dropped || latency > policy.latencyThreshold {
            limit = max(Double(policy.minimumLimit), limit * policy.backoff)
        } else if busy {
            limit = min(Double(policy.maximumLimit), limit + 1)
        }
    }
}
