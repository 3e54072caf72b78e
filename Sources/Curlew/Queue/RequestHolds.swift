internal import Synchronization

/// Holds calls behind a call that declared ``RequestOptions/holdsLaterRequests``:
/// while it runs, every call that reaches this middleware waits; when it ends
/// they start, or fail with `CancellationError`, per its ``RequestHold/Release``. Calls already
/// running are not affected; a call with ``RequestOptions/ignoresHolds`` passes. Several calls
/// may hold under one tag: the hold lasts until the last of them ends.
///
/// Register one instance on the client (it places itself first, in phase
/// ``MiddlewarePhase/scheduling``) and keep it to release or cancel manual holds. Named queues
/// are entered before the middleware, so a held call in a named queue waits with its queue slot;
/// a cancelled held call leaves without being sent, and so does one whose deadline
/// (``withDeadline(in:isolation:operation:)``) passes while it waits, with `.deadlineExceeded`:
///
/// ```swift
/// let holds = RequestHolds()
/// let client = APIClient(configuration: ClientConfiguration(baseURL: url, middleware: [holds]))
/// async let login = client.send(Login()) { $0.holdsLaterRequests = RequestHold(tag: "login", release: .manually) }
/// // … later calls wait …
/// holds.release("login")          // holds.cancel("login") fails them instead
/// ```
public final class RequestHolds: APIMiddleware, Sendable {
    private typealias Waiter = CheckedContinuation<Bool, any Error>

    private struct Hold {
        /// The holding calls still running: two calls may hold under one tag (one that ignores
        /// holds, or two that started together), and the hold lasts until the last one ends.
        var holders = 0
        /// Whether a holding call succeeded (``RequestHold/Release/onSuccess``).
        var succeeded = false
        var waiters: [UInt64: Waiter] = [:]
    }

    private struct State {
        var holds: [String: Hold] = [:]
        var nextID: UInt64 = 0
    }

    /// Every field is guarded by this lock.
    private let state = Mutex(State())

    /// Creates the middleware, with no hold active.
    public init() {}

    /// `.holds`.
    public var kind: MiddlewareKind { .holds }

    /// ``MiddlewarePhase/scheduling``.
    public var phase: MiddlewarePhase? { .scheduling }

    /// The tags of the holds in force (running, or ended and waiting for a manual release).
    public var activeTags: [String] { state.withLock { $0.holds.keys.sorted() } }

    /// How many calls wait for the hold named `tag`.
    public func heldCount(_ tag: String) -> Int { state.withLock { $0.holds[tag]?.waiters.count ?? 0 } }

    /// Ends the hold: the calls waiting for it start.
    public func release(_ tag: String) {
        let waiters = state.withLock { $0.holds.removeValue(forKey: tag)?.waiters.values.map { $0 } ?? [] }
        for waiter in waiters { waiter.resume(returning: true) }
    }

    /// Ends the hold: the calls waiting for it fail with `CancellationError`.
    public func cancel(_ tag: String) {
        let waiters = state.withLock { $0.holds.removeValue(forKey: tag)?.waiters.values.map { $0 } ?? [] }
        for waiter in waiters { waiter.resume(throwing: CancellationError()) }
    }

    /// Waits while a hold is in force, then sends; a holding call holds others while it runs.
    public nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        if !context.options.ignoresHolds { try await waitWhileHeld(context, request: request.summary) }
        guard let hold = context.options.holdsLaterRequests else { return try await next(request, context) }
        state.withLock { $0.holds[hold.tag, default: Hold()].holders += 1 }
        do {
            let response = try await next(request, context)
            if hold.release == .onSuccess, let outcome = context.callOutcome {
                // Success is the caller's: a response whose body does not decode fails the call.
                outcome.onEnd { succeeded in self.finish(hold, succeeded: succeeded) }
            } else {
                finish(hold, succeeded: true)
            }
            return response
        } catch {
            context.callOutcome?.clear()
            finish(hold, succeeded: false)
            throw error
        }
    }

    /// One holding call ended. When it was the last, a hold that ends by itself ends: its
    /// waiters start, or, for ``RequestHold/Release/onSuccess`` when no holder succeeded, fail.
    private func finish(_ hold: RequestHold, succeeded: Bool) {
        let (waiters, proceed) = state.withLock { state -> ([Waiter], Bool) in
            guard var entry = state.holds[hold.tag] else { return ([], true) }
            entry.holders -= 1
            entry.succeeded = entry.succeeded || succeeded
            guard entry.holders <= 0, hold.release != .manually else {
                state.holds[hold.tag] = entry
                return ([], true)
            }
            state.holds[hold.tag] = nil
            return (Array(entry.waiters.values), hold.release == .whenFinished || entry.succeeded)
        }
        for waiter in waiters {
            if proceed { waiter.resume(returning: true) } else { waiter.resume(throwing: CancellationError()) }
        }
    }

    /// Waits for each hold in force in turn until none is left; under a deadline
    /// (``withDeadline(in:isolation:operation:)``), until the deadline at the latest, then fails
    /// with `.deadlineExceeded` at stage `.deadline`, unsent, as a wait for a queue slot does.
    private func waitWhileHeld(_ context: MiddlewareContext, request: RequestSummary) async throws {
        let deadline = context.deadline
        while true {
            let id = self.state.withLock { state -> UInt64 in
                state.nextID += 1
                return state.nextID
            }
            var alarm: Task<Void, Never>?
            defer { alarm?.cancel() }
            let waited = try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { (continuation: Waiter) in
                    let tag = self.state.withLock { state -> String?? in
                        guard let tag = state.holds.keys.min() else { return .some(nil) }
                        if Task.isCancelled { return nil }
                        state.holds[tag]?.waiters[id] = continuation
                        return .some(tag)
                    }
                    switch tag {
                    case .none: continuation.resume(throwing: CancellationError())
                    case .some(.none): continuation.resume(returning: false)
                    case .some(.some(let tag)):
                        context.events.report(.requestHeld) { $0.reason = "held by \(tag)" }
                        guard let deadline else { break }
                        // The deadline takes the waiter out as cancellation does: whichever comes
                        // first removes it under the lock and resumes it.
                        alarm = CallDeadline.alarm(at: deadline) {
                            self.removeWaiter(id)?.resume(
                                throwing: CallDeadline.exceededWhileWaiting(for: "the hold \"\(tag)\"", request: request))
                        }
                    }
                }
            } onCancel: {
                self.removeWaiter(id)?.resume(throwing: CancellationError())
            }
            if !waited { return }
        }
    }

    /// Takes the waiter `id` out of whichever hold it waits for; `nil` when it no longer waits
    /// (released, cancelled, or already taken out).
    private func removeWaiter(_ id: UInt64) -> Waiter? {
        state.withLock { state -> Waiter? in
            for tag in state.holds.keys {
                if let waiter = state.holds[tag]?.waiters.removeValue(forKey: id) { return waiter }
            }
            return nil
        }
    }
}
