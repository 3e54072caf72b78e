/// Sends a batch of requests with a fixed number of requests in flight and reports what happened.
///
/// A driver is created per client and concurrency level, used for the warm-up and then the
/// measured batch, and shut down afterwards. Calls are sequential; `drive` is not reentrant.
protocol LoadDriver {
    /// Sends `requests` GETs with exactly `concurrency` in flight until the batch runs out.
    func drive(requests: Int, concurrency: Int) async -> BatchSample
    /// Closes every connection and frees the client.
    func shutdown() async
}

/// Latencies and failures of one batch.
struct BatchSample: Sendable {
    /// Per-request latency in nanoseconds, successful and failed requests alike.
    var latencies: [UInt64] = []
    /// Requests that threw, were not `200` or had an unexpected body length.
    var failures: Int = 0
    /// The first failure's description, for the error stream.
    var firstFailure: String?

    init(reservingCapacity capacity: Int = 0) {
        latencies.reserveCapacity(capacity)
    }

    /// Records one finished request; `failure` is `nil` when it succeeded.
    mutating func record(latency: UInt64, failure: String?) {
        latencies.append(latency)
        if let failure {
            failures += 1
            if firstFailure == nil { firstFailure = failure }
        }
    }

    /// Adds another worker's sample to this one.
    mutating func merge(_ other: BatchSample) {
        latencies += other.latencies
        failures += other.failures
        if firstFailure == nil { firstFailure = other.firstFailure }
    }
}

/// What a correct response looks like, checked the same way for every client.
struct ResponseCheck {
    let expectedBytes: Int?

    /// `nil` when the response is correct, otherwise a description of what is wrong.
    func failure(status: Int, bodyBytes: Int) -> String? {
        if status != 200 { return "status \(status)" }
        if let expectedBytes, bodyBytes != expectedBytes { return "body of \(bodyBytes) bytes, expected \(expectedBytes)" }
        return nil
    }
}
