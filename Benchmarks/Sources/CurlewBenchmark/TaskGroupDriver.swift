#if canImport(Glibc)
import Glibc
#endif
import Synchronization

/// One async HTTP client under test: sends one GET to the benchmark URL.
protocol BenchmarkClient: Sendable {
    /// Sends one GET and returns its status code and body length.
    /// - Throws: Whatever the client throws for a failed exchange.
    func fetch() async throws -> (status: Int, bodyBytes: Int)
    /// Closes connections and frees the client.
    func shutdown() async
    /// The executor the request loops prefer, `nil` for the default (Curlew: its transport's
    /// engine thread, which is how its documentation says to run a loop of requests).
    var executor: (any TaskExecutor)? { get }
}

extension BenchmarkClient {
    /// The default executor.
    var executor: (any TaskExecutor)? { nil }
}

/// `CURLEW_BENCH_NO_EXECUTOR=1` runs Curlew's loops on the default executor too (the cost of a
/// thread hand-off per request, as before the engine was an executor).
let benchmarkUsesEngineExecutor = getenv("CURLEW_BENCH_NO_EXECUTOR").map { String(cString: $0) != "1" } ?? true

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
                // Read once per task: a Curlew transport with several engines hands out its
                // engines' executors in turn, so the loops spread over every engine.
                let executor = benchmarkUsesEngineExecutor ? client.executor : nil
                group.addTask(executorPreference: executor) {
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
