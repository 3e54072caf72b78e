/// Runs indexed operations in a task group with a concurrency cap, fail-fast and a deadline.
/// The one mechanism behind every batch API.
enum BatchRunner {
    private enum Event<T: Sendable>: Sendable {
        case finished(Int, Result<T, any Error>)
        case deadline
    }

    /// Runs `operation(0..<count)`; returns results in input order.
    /// - Parameters:
    ///   - onEach: Called on the caller's task as each member finishes.
    ///   - describe: The request of member `index`, for the error of a member the deadline
    ///     stopped; `nil` for operations that are not one request.
    static func run<T: Sendable>(
        count: Int,
        options: BatchOptions,
        operation: @escaping @Sendable (Int) async throws -> T,
        onEach: ((Int, Result<T, any Error>) -> Void)? = nil,
        describe: ((Int) -> RequestSummary?)? = nil
    ) async -> [Result<T, any Error>] {
        if let refusal = options.refusal() {
            return (0..<count).map { index in
                var error = refusal
                error.request = describe?(index)
                let failure: Result<T, any Error> = .failure(error)
                onEach?(index, failure)
                return failure
            }
        }
        var results = [Result<T, any Error>?](repeating: nil, count: count)
        let limit = options.maximumConcurrency ?? max(1, count)
        var stopReason: CurlewError.Code?

        await withTaskGroup(of: Event<T>.self) { group in
            if let deadline = options.deadline {
                group.addTask {
                    try? await CallDeadline.sleep(until: .now + deadline)
                    return .deadline
                }
            }
            var next = 0
            var running = 0
            while next < count, running < limit {
                let index = next
                group.addTask { .finished(index, await Self.capture { try await operation(index) }) }
                next += 1
                running += 1
            }
            while running > 0, let event = await group.next() {
                switch event {
                case .deadline:
                    if stopReason == nil, !Task.isCancelled {
                        stopReason = .totalTimeout
                        group.cancelAll()
                    }
                case .finished(let index, var result):
                    running -= 1
                    // A member stopped by the batch's deadline fails with `.totalTimeout`; one stopped
                    // by fail-fast, or by the caller's cancellation, with `CancellationError`.
                    if case .failure(let error) = result, Self.isCancellation(error) {
                        // The request as it was sent (the error's), else as the batch describes it.
                        let request = { (error as? CurlewError)?.request ?? describe?(index) }
                        result = .failure(stopReason.map { Self.stoppedError($0, request: request()) } ?? CancellationError())
                    }
                    results[index] = result
                    onEach?(index, result)
                    if case .failure = result, options.failsFast, stopReason == nil {
                        stopReason = .cancelled
                        group.cancelAll()
                    }
                    while stopReason == nil, next < count, running < limit {
                        let index = next
                        group.addTask { .finished(index, await Self.capture { try await operation(index) }) }
                        next += 1
                        running += 1
                    }
                }
            }
            group.cancelAll()  // stops the deadline timer once every member is done
        }
        return results.enumerated().map { index, result in
            if let result { return result }
            let failure: Result<T, any Error> = .failure(Self.stoppedError(stopReason ?? .cancelled, request: describe?(index)))
            onEach?(index, failure)
            return failure
        }
    }

    private static func capture<T>(_ body: () async throws -> T) async -> Result<T, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }

    static func isCancellation(_ error: any Error) -> Bool {
        error is CancellationError || (error as? CurlewError)?.code == .cancelled
    }

    /// Why the batch stopped a member: its deadline (a ``/CurlewCore/CurlewError`` `.totalTimeout`
    /// naming the member's `request`), or fail-fast (`CancellationError`, the one spelling of
    /// cancellation).
    static func stoppedError(_ code: CurlewError.Code, request: @autoclosure () -> RequestSummary?) -> any Error {
        guard code == .totalTimeout else { return CancellationError() }
        var error = CurlewError(code: .totalTimeout, message: "the batch deadline passed before this request finished", request: request())
        error.stage = .deadline
        return error
    }

    /// A member's error as the batch reports it: `CancellationError` for any cancellation, a
    /// ``/CurlewCore/CurlewError`` otherwise.
    static func memberError(_ error: any Error) -> any Error {
        isCancellation(error) ? CancellationError() : CurlewError.wrappingOperation(error)
    }
}
