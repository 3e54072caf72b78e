import Synchronization

/// One async HTTP client under test: sends one GET to the benchmark URL.
protocol BenchmarkClient: Sendable {
    /// Sends one GET and returns its status code and body length.
    /// - Throws: Whatever the client throws for a failed exchange.
    func fetch() async throws -> (status: Int, bodyBytes: Int)
    /// Closes connections and frees the client.
    func shutdown() async
}

/// Drives a ``BenchmarkClient`` with `concurrency` child tasks of one `TaskGroup`, each looping
/// over a shared atomic counter until the batch is used up.
struct TaskGroupDriver<APIClient: BenchmarkClient>: LoadDriver {
    let client: APIClient
    let check: ResponseCheck

    init(client: APIClient, expectedBytes: Int?) {
        self.client = client
        self.check = ResponseCheck(expectedBytes: expectedBytes)
    }

    func drive(requests: Int, concurrency: Int) async -> BatchSample {
        let counter = BatchCounter(limit: requests)
        let client = self.client
        let check = self.check
        return await withTaskGroup(of: BatchSample.self) { group in
            for _ in 0..<concurrency {
                group.addTask {
                    var sample = BatchSample(reservingCapacity: requests / concurrency + 1)
                    while counter.claim() {
                        let start = MonotonicClock.nanoseconds()
                        let failure: String?
                        do {
                            let (status, bodyBytes) = try await client.fetch()
                            failure = check.failure(status: status, bodyBytes: bodyBytes)
                        } catch {
                            failure = "\(error)"
                        }
                        sample.record(latency: MonotonicClock.nanoseconds() - start, failure: failure)
                    }
                    return sample
                }
            }
            var merged = BatchSample(reservingCapacity: requests)
            for await sample in group { merged.merge(sample) }
            return merged
        }
    }

    func shutdown() async {
        await client.shutdown()
    }
}

/// Hands out request slots `0..<limit` to any number of workers.
final class BatchCounter: Sendable {
    private let next = Atomic<Int>(0)
    private let limit: Int

    init(limit: Int) { self.limit = limit }

    /// Claims the next slot; `false` once the batch is used up.
    func claim() -> Bool {
        next.wrappingAdd(1, ordering: .relaxed).oldValue < limit
    }
}
