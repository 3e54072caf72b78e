internal import Synchronization

/// A write-once box a child task fills and the parent reads after the group finished.
final class ResultSlot<T: Sendable>: Sendable {
    private let value = Mutex<Result<T, any Error>?>(nil)

    init() {}

    func store(_ result: Result<T, any Error>) {
        value.withLock { $0 = result }
    }

    /// The stored error, if the member failed.
    func peekFailure() -> (any Error)? {
        value.withLock { value in
            if case .failure(let error) = value { return error }
            return nil
        }
    }

    /// The member's result; a member that never stored one was cancelled before it ran.
    func take() -> Result<T, any Error> {
        value.withLock { $0 } ?? .failure(CancellationError())
    }
}
