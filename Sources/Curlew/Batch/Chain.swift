internal import Synchronization

/// Sequential steps where each builds its request from the previous step's typed response
/// (Monkey's and LCNetwork's chain requests). Nothing runs until ``run()``.
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
/// The chain stops at the first failure with a ``ChainError`` naming the step and keeping the
/// earlier responses; later steps are never sent. Cancelling the task that runs the chain stops
/// it the same way. A step may be any async operation, so batches run inside chains and chains
/// inside batches (``Client/batch(operations:options:)``).
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

    /// Runs the steps in order.
    /// - Returns: The last step's output.
    /// - Throws: ``ChainError`` for the first step that failed (or was cancelled).
    public func run() async throws(ChainError) -> Output {
        let progress = ChainProgress()
        do {
            let activity = Activity(kind: .chain, name: "chain \(name) (\(stepCount) steps)")
            return try await AccessoryScope.run(activity, accessories: client.configuration.accessories) {
                try await body(progress)
            }
        } catch let error as ChainError {
            throw error
        } catch {
            throw ChainError(step: 0, name: "chain", underlying: error, completedResponses: progress.completed)
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

/// A chain step failed. Names the step and keeps the responses of the steps before it.
public struct ChainError: Error, CustomStringConvertible {
    /// The failed step's number, from 1.
    public var step: Int
    /// The failed step's name (`"step N"` unless named).
    public var name: String
    /// Why it failed — usually a ``CurlewError`` (`.cancelled` when the chain was cancelled).
    public var underlying: any Error
    /// The outputs of the steps that completed, in order.
    public var completedResponses: [any Sendable]

    /// `chain step 2 "profile" failed: …`.
    public var description: String {
        "chain step \(step) \"\(name)\" failed after \(completedResponses.count) completed step(s): \(underlying)"
    }
}

/// What a running chain has completed so far. Steps run one after another, but on whichever
/// thread the task resumes on, so the list is kept behind a mutex.
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
        } catch let error as ChainError {
            throw error
        } catch {
            throw ChainError(step: number, name: stepName, underlying: CurlewError.wrapping(error), completedResponses: completed)
        }
    }
}
