/// The commands other threads hand to the engine thread, and the engine's lifecycle, as a value.
///
/// Guarded by the engine's `Mutex`; every method is a pure state transition that returns what the
/// caller must do after releasing the lock (resume a continuation, wake the engine).
package struct CurlEngineInbox {
    /// A unit of work for the engine thread.
    package enum Command {
        /// Start a transfer.
        case add(CurlEngine.Job)
        /// Stop a transfer and fail it with a cancellation error.
        case cancel(UInt64)
        /// Resume a transfer paused by its response-body reader or its request-body producer;
        /// each paused direction resumes only if its side is ready.
        case unpause(UInt64)
        /// From this instant (``EngineClock``) on, every transfer in flight or submitted later
        /// fails with `.shutdown` and this message (a draining transport's grace period ended).
        case deadline(UInt64, message: String)
    }

    package enum Phase {
        case running
        /// Shutdown requested; the engine thread fails in-flight work, cleans up and exits.
        case shuttingDown(waiters: [CheckedContinuation<Void, Never>])
        case stopped
    }

    package private(set) var phase: Phase = .running
    private var commands: [Command] = []
    /// Tasks that prefer the engine as their executor, ready to run (see `CurlEngine+Executor`).
    private var jobs: [UnownedJob] = []

    /// Whether nothing waits for the engine thread.
    package var isEmpty: Bool { commands.isEmpty && jobs.isEmpty }

    /// What the caller of ``submit(_:)`` must do after unlocking.
    package enum SubmitAction {
        /// The inbox was empty: wake the engine.
        case wake
        /// A wake-up is already pending for earlier commands.
        case none
        case rejectShutdown(CurlEngine.Job)
        /// The caller was cancelled before the job was queued.
        case rejectCancelled(CurlEngine.Job)
    }

    /// Queues a transfer. Only the command that makes the inbox non-empty wakes the engine; the
    /// engine drains everything at once, so later ones ride on that wake-up (one syscall saved
    /// per request under load).
    package mutating func submit(_ job: CurlEngine.Job) -> SubmitAction {
        guard case .running = phase else { return .rejectShutdown(job) }
        commands.append(.add(job))
        return commands.count == 1 && jobs.isEmpty ? .wake : .none
    }

    /// Queues a command that only matters while running. Returns whether to wake the engine.
    package mutating func post(_ command: Command) -> Bool {
        guard case .running = phase else { return false }
        commands.append(command)
        return commands.count == 1 && jobs.isEmpty
    }

    /// Queues a task job while running (returns whether to wake the engine, as ``post(_:)``);
    /// `nil` once shutdown started: the caller runs the job elsewhere.
    package mutating func enqueue(_ job: UnownedJob) -> Bool? {
        guard case .running = phase else { return nil }
        jobs.append(job)
        return jobs.count == 1 && commands.isEmpty
    }

    /// What the caller of ``requestShutdown()`` must do after unlocking.
    package enum ShutdownAction {
        /// This call started the shutdown: wake the engine, then wait and join.
        case wakeAndJoin
        /// Shutdown already underway: just wait.
        case wait
        /// Already stopped: nothing to wait for.
        case resumeNow
    }

    /// Starts shutting down; waiters register with ``addStopWaiter(_:)``.
    package mutating func requestShutdown() -> ShutdownAction {
        switch phase {
        case .running:
            phase = .shuttingDown(waiters: [])
            return .wakeAndJoin
        case .shuttingDown:
            return .wait
        case .stopped:
            return .resumeNow
        }
    }

    /// Registers a continuation resumed when the engine has stopped; returns `false` when it
    /// already has (resume it at once).
    package mutating func addStopWaiter(_ waiter: CheckedContinuation<Void, Never>) -> Bool {
        switch phase {
        case .running, .stopped:
            return false
        case .shuttingDown(var waiters):
            waiters.append(waiter)
            phase = .shuttingDown(waiters: waiters)
            return true
        }
    }

    /// The engine thread takes everything posted since its last look, by swapping the queues
    /// with its own empty ones (`commands` and `jobs`, emptied with their capacity kept after the
    /// last round): the two pairs of buffers take turns, so a steady stream of requests allocates
    /// no queue storage. Returns whether the engine must shut down.
    package mutating func drain(into commands: inout [Command], jobs: inout [UnownedJob]) -> Bool {
        swap(&commands, &self.commands)
        swap(&jobs, &self.jobs)
        if case .shuttingDown = phase { return true }
        return false
    }

    /// The engine thread takes the commands posted since its last look (the jobs stay), swapping
    /// as ``drain(into:jobs:)`` does.
    package mutating func drainCommands(into commands: inout [Command]) {
        swap(&commands, &self.commands)
    }

    /// The engine thread finished shutting down; returns the waiters to resume.
    package mutating func markStopped() -> [CheckedContinuation<Void, Never>] {
        defer { phase = .stopped }
        if case .shuttingDown(let waiters) = phase { return waiters }
        return []
    }
}
