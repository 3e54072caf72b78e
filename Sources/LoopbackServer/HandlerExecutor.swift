import Dispatch

/// Where the handlers run: threads of their own, not Swift's cooperative pool.
///
/// A test process shares the cooperative pool (one thread per core — two on a small CI machine)
/// with everything under test. When a test elsewhere in the run keeps both threads busy (hashing a
/// gibibyte, three hundred callers at once), a handler waiting its turn there answers seconds
/// late, and a test of timeouts or single-flights fails for the machine's load, not for its
/// behaviour. A concurrent dispatch queue runs each job on a thread outside that pool (dispatch
/// adds threads for blocked work), so a server answers when its handler is ready.
final class HandlerExecutor: TaskExecutor {
    /// The one executor all servers of a process share.
    static let shared = HandlerExecutor()

    private let queue = DispatchQueue(label: "LoopbackServer.handlers", attributes: .concurrent)

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        let executor = asUnownedTaskExecutor()
        queue.async { job.runSynchronously(on: executor) }
    }
}
