internal import Synchronization

/// Waits for a shared task's result and stops waiting — with `CancellationError` — as soon as the
/// *waiting* task is cancelled, while the shared task carries on for its other waiters (a token
/// refresh shared by many requests). `task.value` alone would wait until the task finished.
enum CancellableWait {
    /// The task's result, or `CancellationError` when the caller is cancelled first.
    ///
    /// With a `deadline`, the wait also ends when it passes, with `.deadlineExceeded` about
    /// `request`; the task carries on.
    static func value<T: Sendable>(of task: Task<T, any Error>, deadline: ContinuousClock.Instant? = nil, request: RequestSummary? = nil) async throws -> T {
        let slot = Slot<T>()
        let alarm = deadline.map { deadline in
            CallDeadline.alarm(at: deadline) { slot.resume(with: .failure(CallDeadline.exceededWhileWaiting(for: "the token refresh", request: request))) }
        }
        defer { alarm?.cancel() }
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                slot.install(continuation)
                Task { slot.resume(with: await task.result) }
            }
        } onCancel: {
            slot.resume(with: .failure(CancellationError()))
        }
    }

    /// The continuation and, if it came first, the result (one `Mutex`); resumed exactly once.
    private final class Slot<T: Sendable>: Sendable {
        private enum State {
            case empty
            case waiting(CheckedContinuation<T, any Error>)
            case done(Result<T, any Error>)
            case resumed
        }

        private let state = Mutex(State.empty)

        func install(_ continuation: CheckedContinuation<T, any Error>) {
            let early = state.withLock { state -> Result<T, any Error>? in
                if case .done(let result) = state {
                    state = .resumed
                    return result
                }
                state = .waiting(continuation)
                return nil
            }
            if let early { continuation.resume(with: early) }
        }

        func resume(with result: Result<T, any Error>) {
            let waiter = state.withLock { state -> CheckedContinuation<T, any Error>? in
                switch state {
                case .empty:
                    state = .done(result)
                    return nil
                case .waiting(let continuation):
                    state = .resumed
                    return continuation
                case .done, .resumed:
                    return nil
                }
            }
            waiter?.resume(with: result)
        }
    }
}
