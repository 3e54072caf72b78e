/// The latencies of an endpoint type's recent calls and a percentile of them, as a value: the
/// last ``capacity`` samples in a ring, and the percentile recomputed (a sort of at most
/// `capacity` values) after every ``refreshEvery`` new samples, so a record is O(1) amortised
/// and a read is a load. It never reads a clock: latencies come in measured.
///
/// ``HedgingMiddleware`` keeps one per endpoint type and hedges a call once it has waited the
/// observed p95 of its type.
struct LatencyWindow: Sendable, Equatable {
    /// The most samples kept; older ones drop out, so the percentile follows a changing origin.
    let capacity: Int
    /// The percentile (0…1) kept current.
    let percentile: Double
    /// New samples between two recomputations.
    let refreshEvery: Int
    /// The samples in nanoseconds, as a ring once full.
    private var samples: [Int64] = []
    /// Where the next sample goes once the ring is full.
    private var next = 0
    /// Samples since the last recomputation.
    private var sinceRefresh = 0
    /// The percentile as of the last recomputation; `nil` before the first.
    private(set) var current: Duration?

    /// An empty window; `percentile` within 0…1 (``HedgingMiddleware`` refuses others before a
    /// call records a latency), `capacity` and `refreshEvery` at least 1.
    init(percentile: Double, capacity: Int = 200, refreshEvery: Int = 10) {
        self.percentile = percentile
        self.capacity = capacity
        self.refreshEvery = refreshEvery
        samples.reserveCapacity(capacity)
    }

    /// Samples held (at most ``capacity``).
    var count: Int { samples.count }

    /// Adds one call's latency.
    mutating func record(_ latency: Duration) {
        let nanoseconds = max(0, latency.wholeNanoseconds)
        if samples.count < capacity {
            samples.append(nanoseconds)
        } else {
            samples[next] = nanoseconds
            next = (next + 1) % capacity
        }
        sinceRefresh += 1
        if sinceRefresh >= refreshEvery || current == nil {
            sinceRefresh = 0
            current = Self.percentile(percentile, of: samples)
        }
    }

    /// The nearest-rank percentile `p` of `values` (the smallest value with at least `p` of them
    /// at or below it); `nil` for no values.
    static func percentile(_ p: Double, of values: [Int64]) -> Duration? {
        guard !values.isEmpty else { return nil }
        let sorted = values.sorted()
        let rank = Int((p * Double(sorted.count)).rounded(.up))
        return .nanoseconds(sorted[min(sorted.count - 1, max(0, rank - 1))])
    }
}
