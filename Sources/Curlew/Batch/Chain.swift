internal import Synchronization

/// Sequential steps where each builds its request from the previous step's typed response.
/// Nothing runs until ``run()``.
///
/// ```swift
/// let profile = try await client
///     .chain(LoginRequest(user: "ana", password: secret), name: "login")
///     .then("profile") { session in ProfileRequest(token: session.token) }
///     .then("avatar", onComplete: { print("avatar:", $0.count, "bytes") }) { profile in
///         ImageRequest(path: profile.avatarPath)
///     }
///     .run()
/// ```
///
/// The chain stops at the first failure with a ``/CurlewCore/CurlewError`` whose stage names the step and which keeps the
/// earlier responses (``/CurlewCore/CurlewError/completedSteps``); later steps are never sent. Cancelling the task stops
/// it with `CancellationError`. A step may be any async operation, so batches run inside chains and chains
/// inside batches (``APIClient/batch(operations:options:)``).
public struct Chain<Output: Sendable>: Sendable {
    fileprivate let client: APIClient
    fileprivate let name: String
    fileprivate let stepCount: Int
    fileprivate let body: @Sendable (ChainProgress) async throws -> Output

    /// Adds a step that sends the request built from the previous step's response.
    /// - Parameters:
    ///   - name: The step's name in errors; default `"step N"`.
    ///   - onComplete: Called with the step's response when it succeeds.
    ///   - makeRequest: Builds the request; throwing fails the step without sending anything.
    public func then<R: Endpoint>(
        _ name: String? = nil,
        onComplete: (@Sendable (R.Response) -> Void)? = nil,
        _ makeRequest: @escaping @Sendable (Output) throws -> R
    ) -> Chain<R.Response> {
        then(name, onComplete: onComplete) { previous, client in
            try await client.send(try makeRequest(previous))
        }
    }

    /// Adds a step that runs any async operation on the previous step's output — a batch, a
    /// nested chain, a computation.
    public func then<Next: Sendable>(
        _ name: String? = nil,
        onComplete: (@Sendable (Next) -> Void)? = nil,
        operation: @escaping @Sendable (Output, APIClient) async throws -> Next
    ) -> Chain<Next> {
        let previous = body
        let client = client
        let number = stepCount + 1
        return Chain<Next>(client: client, name: self.name, stepCount: number) { progress in
            let input = try await previous(progress)
            return try await progress.step(number: number, name: name, onComplete: onComplete) {
                try await operation(input, client)
            }
        }
    }

    /// Runs the steps in order, each starting after the previous one succeeded.
    /// - Throws: A ``/CurlewCore/CurlewError`` whose ``/CurlewCore/CurlewError/stage`` is
    ///   ``/CurlewCore/CurlewError/Stage/chainStep(_:name:)`` of the failing step, with the step's own code,
    ///   status and message, and the values of the steps completed before it in
    ///   ``/CurlewCore/CurlewError/completedSteps``; or `CancellationError` when the task was cancelled.
    public func run() async throws -> Output {
        let progress = ChainProgress()
        let activity = Activity(kind: .chain, name: "chain \(name) (\(stepCount) steps)")
        do {
            return try await AccessoryScope.run(activity, accessories: client.configuration.accessories, group: true) {
                try await body(progress)
            }
        } catch {
            throw APIClient.surface(error, request: nil)
        }
    }
}

extension Chain {
    /// The first step of a chain.
    init<R: Endpoint>(client: APIClient, name: String?, request: R, onComplete: (@Sendable (R.Response) -> Void)?) where Output == R.Response {
        self.client = client
        self.name = name ?? String(describing: R.self)
        self.stepCount = 1
        self.body = { progress in
            try await progress.step(number: 1, name: name, onComplete: onComplete) {
                try await client.send(request)
            }
        }
    }
}

extension APIClient {
    /// Starts a chain with a first request; add steps with ``Chain/then(_:onComplete:_:)`` and
    /// start it with ``Chain/run()``.
    /// - Parameters:
    ///   - request: The first step's request.
    ///   - name: The first step's name in errors; default `"step 1"`.
    ///   - onComplete: Called with the first response when it succeeds.
    public nonisolated func chain<R: Endpoint>(
        _ request: R, name: String? = nil, onComplete: (@Sendable (R.Response) -> Void)? = nil
    ) -> Chain<R.Response> {
        Chain(client: self, name: name, request: request, onComplete: onComplete)
    }
}

/// The values of a running chain's completed steps (a `Mutex`), for the error of a later step.
final class ChainProgress: Sendable {
    private let outputs = Mutex<[any Sendable]>([])

    var completed: [any Sendable] { outputs.withLock { $0 } }

    func step<T: Sendable>(
        number: Int, name: String?, onComplete: (@Sendable (T) -> Void)?, _ body: () async throws -> T
    ) async throws -> T {
        let stepName = name ?? "step \(number)"
        do {
            try Task.checkCancellation()
            let output = try await body()
            outputs.withLock { $0.append(output) }
            onComplete?(output)
            return output
        } catch let error as CurlewError where error.stage?.step != nil {
            throw error  // an inner step of a nested chain already said where
        } catch {
            if Task.isCancelled || error is CancellationError || (error as? CurlewError)?.code == .cancelled {
                throw CancellationError()
            }
            var failure = CurlewError.wrappingOperation(error)
            failure.message = "chain step \(number) \"\(stepName)\" failed after \(completed.count) completed step(s): \(failure.message)"
            failure.stage = .chainStep(number, name: stepName)
            failure.completedSteps = completed
            throw failure
        }
    }
}
