/// Runs one client at one concurrency level: a fresh client, a warm-up, then the measured batch
/// bracketed by `getrusage`, the process's context switches and two `stub_status` readings, then shutdown.
struct Runner {
    let options: BenchmarkOptions
    let status: NginxStatus

    func run(_ client: ClientKind, concurrency: Int) async throws -> RunResult {
        let acceptsBefore = try status.accepts()
        let driver = try client.makeDriver(options: options, concurrency: concurrency)

        if options.warmup > 0 {
            let warmup = await driver.drive(requests: options.warmup, concurrency: concurrency)
            if warmup.failures > 0 {
                Console.error("  warm-up: \(warmup.failures) failures, first: \(warmup.firstFailure ?? "?")")
            }
        }

        let switchesStart = ContextSwitches.count()
        let cpuStart = ProcessCPUTime.microseconds()
        let wallStart = MonotonicClock.nanoseconds()
        let sample = await driver.drive(requests: options.requests, concurrency: concurrency)
        let wallEnd = MonotonicClock.nanoseconds()
        let cpuEnd = ProcessCPUTime.microseconds()
        let switchesEnd = ContextSwitches.count()

        let acceptsAfter = try status.accepts()
        await driver.shutdown()
        if let first = sample.firstFailure {
            Console.error("  \(sample.failures) failures, first: \(first)")
        }
        return RunResult(
            client: client,
            concurrency: concurrency,
            sample: sample,
            wallNanoseconds: wallEnd - wallStart,
            cpuMicroseconds: cpuEnd - cpuStart,
            contextSwitches: switchesEnd &- switchesStart,
            connections: acceptsAfter - acceptsBefore - 1
        )
    }
}
