internal import HTTPTypes

/// Runs `operation` with a deadline that every Curlew call made inside it — in this task or a
/// child task — obeys: each attempt's total timeout becomes the smaller of its own and the time
/// left, a call that starts after the deadline fails at once with `.deadlineExceeded` before
/// anything is sent, and ``RetryMiddleware`` schedules no retry that would end after it.
///
/// Deadlines nest: an inner one can only make the budget shorter. Set one where a budget begins
/// — a server handler from its incoming request's own timeout, a job from its schedule:
///
/// ```swift
/// let profile = try await withDeadline(in: .milliseconds(300)) {
///     try await client.send(ProfileRequest())      // cut off at 300 ms, with .deadlineExceeded
/// }
/// ```
///
/// The deadline does not cancel `operation` itself; work other than Curlew calls keeps running.
/// With ``ClientConfiguration/deadlineHeader`` set, each attempt also tells the server how much
/// time is left.
/// - Parameters:
///   - budget: How long from now the calls inside may take.
///   - isolation: The caller's actor, which `operation` runs on.
///   - operation: The work; its Curlew calls obey the deadline.
/// - Returns: What `operation` returns.
public func withDeadline<T>(
    in budget: Duration, isolation: isolated (any Actor)? = #isolation, operation: () async throws -> T
) async rethrows -> T {
    try await withDeadline(at: .now + budget, isolation: isolation, operation: operation)
}

/// Runs `operation` with the deadline `instant` (see ``withDeadline(in:isolation:operation:)``); an
/// enclosing earlier deadline stays in force.
/// - Parameters:
///   - instant: When the calls inside must be done.
///   - isolation: The caller's actor, which `operation` runs on.
///   - operation: The work; its Curlew calls obey the deadline.
/// - Returns: What `operation` returns.
public func withDeadline<T>(
    at instant: ContinuousClock.Instant, isolation: isolated (any Actor)? = #isolation, operation: () async throws -> T
) async rethrows -> T {
    let effective = CallDeadline.current.map { min($0, instant) } ?? instant
    return try await CallDeadline.$current.withValue(effective, operation: operation, isolation: isolation)
}

/// The task-local deadline behind ``withDeadline(at:isolation:operation:)`` and what the request path does
/// with it.
package enum CallDeadline {
    /// The deadline of the calls made by this task, `nil` for none.
    @TaskLocal package static var current: ContinuousClock.Instant?

    /// The error for a call or attempt that would start when its deadline has passed.
    static func exceeded(_ request: RequestSummary?, by overdue: Duration) -> CurlewError {
        var error = CurlewError(
            code: .deadlineExceeded, message: "the deadline passed \(milliseconds(overdue)) ms ago; nothing was sent", request: request)
        error.stage = .deadline
        return error
    }

    /// Runs `expire` once `deadline` passes, unless the returned task is cancelled first: what ends
    /// a wait (for a queue slot, a limiter slot, a token refresh) at the call's deadline. `expire`
    /// must remove the waiter under the same lock its other exits take, so exactly one of them
    /// resumes it.
    package static func alarm(at deadline: ContinuousClock.Instant, _ expire: @escaping @Sendable () -> Void) -> Task<Void, Never> {
        Task.detached {
            do { try await sleep(until: deadline) } catch { return }
            expire()
        }
    }

    /// Sleeps for `duration`; one too long for the clock to sleep (more than about 136 years:
    /// `Task.sleep` would overflow its count of seconds and stop the process, and a
    /// `.seconds(Int64.max)` setting means "forever") lasts until the task is cancelled.
    package static func sleep(for duration: Duration) async throws {
        try await sleep(until: .now + duration)
    }

    /// ``sleep(for:)`` to an instant.
    package static func sleep(until instant: ContinuousClock.Instant) async throws {
        let furthest = Duration.seconds(1 << 32)
        while instant - .now > furthest { try await Task.sleep(for: furthest) }
        try await Task.sleep(until: instant, clock: .continuous)
    }

    /// The error for a call whose deadline passed while it waited for `what`, before anything
    /// was sent.
    package static func exceededWhileWaiting(for what: String, request: RequestSummary?) -> CurlewError {
        var error = CurlewError(code: .deadlineExceeded, message: "the deadline passed while the call waited for \(what); nothing was sent", request: request)
        error.stage = .deadline
        return error
    }

    /// Fails when `deadline` has passed at `now`.
    static func check(_ deadline: ContinuousClock.Instant, now: ContinuousClock.Instant, request: RequestSummary?) throws(CurlewError) {
        if now >= deadline { throw exceeded(request, by: now - deadline) }
    }

    /// Caps one attempt by the deadline: its total timeout becomes the time left when that is
    /// shorter, and the forwarded header (if any) says how long the client waits for the attempt:
    /// the time left, or the attempt's own total timeout when that is shorter (the server need
    /// not work on after the client gave up). Returns whether the deadline is what limits the
    /// attempt (a `.totalTimeout` then means `.deadlineExceeded`).
    static func cap(_ request: inout PreparedRequest, by deadline: ContinuousClock.Instant, now: ContinuousClock.Instant, header: HTTPField.Name?) throws(CurlewError) -> Bool {
        try check(deadline, now: now, request: request.summary)
        let left = deadline - now
        if let own = request.options.totalTimeout, own <= left {
            if let header { request.headers[header] = grpcTimeout(own) }
            return false
        }
        if let header { request.headers[header] = grpcTimeout(left) }
        request.options.totalTimeout = left
        return true
    }

    /// The error the transport's `.totalTimeout` becomes when the deadline capped the attempt.
    static func translate(_ error: CurlewError) -> CurlewError {
        guard error.code == .totalTimeout else { return error }
        var translated = error
        translated.code = .deadlineExceeded
        translated.message = "the call's deadline passed during the exchange (\(error.message))"
        translated.stage = .deadline
        return translated
    }

    /// gRPC's timeout encoding: whole milliseconds (at most 8 digits) and the unit `m`; seconds
    /// (`S`) beyond that.
    static func grpcTimeout(_ left: Duration) -> String {
        let value = milliseconds(left)
        return value < 100_000_000 ? "\(max(0, value))m" : "\(min(99_999_999, value / 1000))S"
    }

    /// Whole milliseconds, saturating (a breaker open "until restart" is `.seconds(Int64.max)`).
    package static func milliseconds(_ duration: Duration) -> Int64 {
        duration.saturatingMilliseconds
    }
}
