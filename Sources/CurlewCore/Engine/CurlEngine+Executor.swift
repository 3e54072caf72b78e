/// The engine thread as a Swift task executor.
///
/// A task that prefers it (`Task(executorPreference: transport.executor)`,
/// `group.addTask(executorPreference:)`, `withTaskExecutorPreference`) runs on the engine thread
/// between libcurl's turns. Its requests are submitted from the engine thread itself (no
/// `curl_multi_wakeup`, no socket round trip) and its continuation is resumed onto the engine's
/// own inbox (no futex, no other thread woken): a request costs about one context switch at
/// concurrency 1, like driving libcurl directly.
///
/// Work that is CPU-heavy for long (decoding megabytes) holds up every transfer of the engine
/// while it runs; run it on another executor.
extension CurlEngine: TaskExecutor {
    /// Queues a job for the engine thread; after shutdown started, the job runs on the global
    /// concurrent executor instead.
    package func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        switch inbox.withLock({ $0.enqueue(job) }) {
        case true?:
            wake()
        case false?:
            break
        case nil:
            globalConcurrentExecutor.enqueue(ExecutorJob(job))
        }
    }

    /// Engine thread: runs jobs taken from the inbox.
    package func runJobs(_ jobs: [UnownedJob]) {
        let executor = asUnownedTaskExecutor()
        for job in jobs { job.runSynchronously(on: executor) }
    }

    /// Hands jobs taken at shutdown to the global concurrent executor.
    package func forward(_ jobs: [UnownedJob]) {
        for job in jobs { globalConcurrentExecutor.enqueue(ExecutorJob(job)) }
    }
}
