internal import Synchronization

/// A write-once box a child task fills and the parent reads after the group finished.
final class ResultSlot<T: Sendable>: Sendable {
    private let value = Mutex<Result<T, CurlewError>?>(nil)

    init() {}

    func store(_ result: Result<T, CurlewError>) {
        value.withLock { $0 = result }
    }

    /// The stored error, if the member failed.
    func peekFailure() -> CurlewError? {
        value.withLock { value in
            if case .failure(let error) = value { return error }
            return nil
        }
    }

    func take() -> Result<T, CurlewError> {
        value.withLock { $0 } ?? .failure(CurlewError(code: .cancelled, message: "the batch ended before this request ran"))
    }
}
