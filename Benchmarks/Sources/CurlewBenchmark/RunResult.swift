/// The measurements of one client at one concurrency level in one round.
struct RunResult: Sendable {
    let client: ClientKind
    let concurrency: Int
    let requestsPerSecond: Double
    let p50Milliseconds: Double
    let p99Milliseconds: Double
    let cpuMicrosecondsPerRequest: Double
    /// Voluntary plus involuntary context switches of the process per request.
    let contextSwitchesPerRequest: Double
    /// Connections nginx accepted from this client during warm-up and measurement.
    let connections: Int
    let failures: Int

    /// Computes the metrics of a measured batch.
    /// - Parameters:
    ///   - wallNanoseconds: Wall time of the measured batch.
    ///   - cpuMicroseconds: Process user+system CPU time of the measured batch.
    ///   - contextSwitches: The process's context switches during the measured batch.
    init(
        client: ClientKind, concurrency: Int, sample: BatchSample, wallNanoseconds: UInt64, cpuMicroseconds: UInt64,
        contextSwitches: UInt64, connections: Int
    ) {
        let requests = Double(max(sample.latencies.count, 1))
        let sorted = sample.latencies.sorted()
        self.client = client
        self.concurrency = concurrency
        self.requestsPerSecond = requests / (Double(max(wallNanoseconds, 1)) / 1e9)
        self.p50Milliseconds = Self.percentile(sorted, 0.50) / 1e6
        self.p99Milliseconds = Self.percentile(sorted, 0.99) / 1e6
        self.cpuMicrosecondsPerRequest = Double(cpuMicroseconds) / requests
        self.contextSwitchesPerRequest = Double(contextSwitches) / requests
        self.connections = connections
        self.failures = sample.failures
    }

    /// Nearest-rank percentile of ascending values (`fraction` in 0...1).
    static func percentile(_ sorted: [UInt64], _ fraction: Double) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((fraction * Double(sorted.count)).rounded(.up))
        return Double(sorted[min(max(rank, 1), sorted.count) - 1])
    }
}

/// One table row: the median of each metric over the rounds of one client and concurrency level,
/// so a burst of unrelated load on the machine during one round does not decide the row.
struct RowSummary: Sendable {
    let client: ClientKind
    let concurrency: Int
    let rounds: Int
    let requestsPerSecond: Double
    let p50Milliseconds: Double
    let p99Milliseconds: Double
    let cpuMicrosecondsPerRequest: Double
    /// Context switches per request (median over the rounds).
    let contextSwitchesPerRequest: Double
    /// Fewest and most connections seen in one round.
    let connections: ClosedRange<Int>
    /// Failures of all rounds together.
    let failures: Int

    /// Groups results by client and concurrency level, in the order they first appear.
    static func summarize(_ results: [RunResult]) -> [RowSummary] {
        var order: [String] = []
        var groups: [String: [RunResult]] = [:]
        for result in results {
            let key = "\(result.client.rawValue)/\(result.concurrency)"
            if groups[key] == nil { order.append(key) }
            groups[key, default: []].append(result)
        }
        return order.compactMap { key in groups[key].flatMap(RowSummary.init(rounds:)) }
    }

    private init?(rounds results: [RunResult]) {
        guard let first = results.first else { return nil }
        func median(_ metric: (RunResult) -> Double) -> Double {
            let values = results.map(metric).sorted()
            let middle = values.count / 2
            return values.count % 2 == 1 ? values[middle] : (values[middle - 1] + values[middle]) / 2
        }
        let connections = results.map(\.connections)
        client = first.client
        concurrency = first.concurrency
        rounds = results.count
        requestsPerSecond = median(\.requestsPerSecond)
        p50Milliseconds = median(\.p50Milliseconds)
        p99Milliseconds = median(\.p99Milliseconds)
        cpuMicrosecondsPerRequest = median(\.cpuMicrosecondsPerRequest)
        contextSwitchesPerRequest = median(\.contextSwitchesPerRequest)
        self.connections = (connections.min() ?? 0)...(connections.max() ?? 0)
        failures = results.reduce(0) { $0 + $1.failures }
    }
}
