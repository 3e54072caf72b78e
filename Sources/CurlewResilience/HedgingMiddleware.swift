public import Curlew
internal import HTTPTypes
internal import Synchronization

/// Sends a second copy of a slow idempotent call — a hedge — and takes whichever answer comes
/// first: the tail latency of one slow server or connection stops being the caller's.
///
/// When a call has no answer after ``delay``, one more attempt goes out (up to ``maximumHedges``),
/// each on a connection of its own over HTTP/1.1, and as another stream of a shared connection
/// where HTTP/2 multiplexes them (HTTPS, by default) — there a hedge rides out a slow server, not a
/// slow connection. The first response wins; the other transfers are cancelled at once (the
/// server sees the disconnect, or on HTTP/2 a stream reset). A failure is an answer only when no other attempt is
/// still running. A budget caps the extra load: every call earns ``budget`` of a hedge (0.1: at
/// most one hedge per ten calls, in the long run), at most ``burst`` are saved up, and a hedge
/// without a token is not sent.
///
/// Only calls that may run twice are hedged: `GET`, `HEAD`, `OPTIONS`, `PUT` and `DELETE`, or any
/// method with an `Idempotency-Key` header, with a body that can be sent again — and never a call
/// whose answer is written to a file (`APIClient.download`, `ResponseBodyDisposition.file(path:)`):
/// its attempts would all write one partial file (two versions of a changed file in one, a hedge
/// failing at once on the file the first attempt created), so it goes out once. Its phase,
/// `MiddlewarePhase.hedging`, is outside the circuit breaker and retry, so each hedge is a whole
/// call of its own below it; no hedge starts after the call's deadline.
///
/// ```swift
/// let hedging = HedgingMiddleware(delay: .milliseconds(50), budget: 0.1)
/// ```
///
/// With a ``percentile`` the delay follows the origin: each endpoint type's recent latencies (the
/// last 200 calls) give its hedge delay, their p95 for `percentile: 0.95`; until a type has
/// ``minimumSamples`` of them, ``delay`` is used. With ``hedgesToFailover`` and a
/// `FailoverMiddleware` of several base URLs, a hedge goes to the next base URL after the one
/// in use, so a slow primary is raced against its mirror:
///
/// ```swift
/// let hedging = HedgingMiddleware(delay: .milliseconds(50), percentile: 0.95, hedgesToFailover: true)
/// ```
///
/// Each hedge is published as `ClientEvent.Kind.hedgeSent` (with the `ClientEvent.delay` it
/// waited) and a hedge that wins as `ClientEvent.Kind.hedgeWon` (with the winning
/// `ClientEvent.attempt`, 2 for the first hedge).
public final class HedgingMiddleware: APIMiddleware {
    /// How long a call waits for an answer before the next hedge goes out; with a
    /// ``percentile``, the delay of an endpoint type with fewer than ``minimumSamples`` calls.
    /// Zero sends the hedges with the call. A negative delay is refused: every call through the
    /// middleware fails with `CurlewError.Code.invalidConnectionSettings`, unsent.
    public let delay: Duration
    /// The percentile (0…1) of an endpoint type's recent latencies that its calls wait before a
    /// hedge goes out (0.95: the p95); `nil` for the fixed ``delay``. A value outside 0…1 (or
    /// NaN) is refused like a negative ``delay``. Default: `nil`.
    public let percentile: Double?
    /// Calls of an endpoint type measured before its percentile replaces ``delay``; fewer than 1
    /// is refused like a negative ``delay``. Default: 20.
    public let minimumSamples: Int
    /// Whether a hedge goes to the next base URL of the client's `FailoverMiddleware` rather
    /// than the one in use. Default: `false`.
    public let hedgesToFailover: Bool
    /// Extra attempts per call at most (0: no hedging); a negative number is refused like a
    /// negative ``delay``. Default: 1.
    public let maximumHedges: Int
    /// Hedges each call earns (0…1, in thousandths): the long-run ceiling on extra requests.
    /// A value outside 0…1 (or NaN) is refused like a negative ``delay``. Default: 0.1.
    public let budget: Double
    /// Hedges that can be saved up for a burst of slow calls; a negative number is refused like
    /// a negative ``delay``. Default: 10.
    public let burst: Int
    /// The hedges earned and not spent, guarded by the mutex.
    private let tokens: Mutex<HedgeBudget>
    /// Recent latencies by endpoint type (``percentile`` only), guarded by the mutex.
    private let latencies = Mutex<[String: LatencyWindow]>([:])
    /// The error every call fails with, unsent, when a setting is refused.
    private let refusal: CurlewError?

    /// Creates the middleware.
    /// - Parameters:
    ///   - delay: How long a call waits before a hedge goes out (about the p95 of its latency);
    ///     with a `percentile`, until its endpoint type has `minimumSamples` measured calls.
    ///   - percentile: The percentile of an endpoint type's recent latencies to wait instead
    ///     (0.95 for the p95); `nil` for the fixed `delay`.
    ///   - minimumSamples: Calls of a type measured before its percentile is used.
    ///   - maximumHedges: Extra attempts per call at most.
    ///   - budget: Hedges each call earns: the long-run share of extra requests.
    ///   - burst: Hedges that can be saved up.
    ///   - hedgesToFailover: Send hedges to the next base URL of the `FailoverMiddleware`.
    ///
    /// A setting it refuses (see each property) is kept as given, never clamped: every call fails
    /// with `CurlewError.Code.invalidConnectionSettings` (stage `configuration`, naming the
    /// setting and its value) before anything is sent.
    public init(
        delay: Duration, percentile: Double? = nil, minimumSamples: Int = 20, maximumHedges: Int = 1, budget: Double = 0.1, burst: Int = 10,
        hedgesToFailover: Bool = false
    ) {
        self.delay = delay
        self.percentile = percentile
        self.minimumSamples = minimumSamples
        self.hedgesToFailover = hedgesToFailover
        self.maximumHedges = maximumHedges
        self.budget = budget
        self.burst = burst
        var check = SettingCheck("HedgingMiddleware")
        check.require(delay >= .zero, "delay", "zero or longer", "\(delay)")
        // A longer wait has no millisecond count (`Task.sleep` stops the process on it).
        check.require(delay <= .seconds(365 * 86_400), "delay", "at most 365 days (maximumHedges 0 turns hedging off)", "\(delay)")
        if let percentile { check.require((0...1).contains(percentile), "percentile", "between 0 and 1", "\(percentile)") }
        check.require(minimumSamples >= 1, "minimumSamples", "at least 1", "\(minimumSamples)")
        check.require(maximumHedges >= 0, "maximumHedges", "zero or more", "\(maximumHedges)")
        check.require((0...1).contains(budget), "budget", "between 0 and 1", "\(budget)")
        check.require(burst >= 0, "burst", "zero or more", "\(burst)")
        self.refusal = check.refusal
        // Refused settings never reach the budget: every call fails before it is used.
        self.tokens = Mutex(check.refusal == nil ? HedgeBudget(ratio: budget, burst: burst) : HedgeBudget(ratio: 0, burst: 0))
    }

    /// `.hedging`.
    public var kind: MiddlewareKind { .hedging }

    /// `MiddlewarePhase.hedging`.
    public var phase: MiddlewarePhase? { .hedging }

    /// What one attempt's child task ends with.
    private enum Finish: Sendable {
        case answer(attempt: Int, Result<RawResponse, any Error>)
        case timer
    }

    /// Sends the call, and a hedge each time ``delay`` passes without an answer while the budget
    /// allows; returns the first answer.
    public nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        if let refusal { throw refusal }
        tokens.withLock { $0.deposit() }
        guard maximumHedges > 0, Self.mayRunTwice(request), !context.responseBody.writesToFile else { return try await next(request, context) }
        // The group's tasks all end before it returns, so `next` never outlives this call.
        return try await withoutActuallyEscaping(next) { next in
            try await race(request, context: context, next: next)
        }
    }

    /// The delay before a hedge of a call of the endpoint type `requestName` (its type's name,
    /// `MiddlewareContext.requestName`): with a ``percentile``, that percentile of the type's
    /// recent latencies once ``minimumSamples`` were measured; otherwise ``delay``.
    public func hedgeDelay(for requestName: String) -> Duration {
        guard percentile != nil else { return delay }
        return latencies.withLock { windows in
            guard let window = windows[requestName], window.count >= minimumSamples, let current = window.current else { return nil }
            return current
        } ?? delay
    }

    /// Adds a call's latency to its endpoint type's window (``percentile`` only).
    func record(_ latency: Duration, for requestName: String) {
        guard let percentile else { return }
        latencies.withLock { windows in windows[requestName, default: LatencyWindow(percentile: percentile)].record(latency) }
    }

    /// Runs the attempts in a task group until one answers.
    private nonisolated(nonsending) func race(_ request: PreparedRequest, context: MiddlewareContext, next: @escaping MiddlewareNext) async throws -> RawResponse {
        let delay = hedgeDelay(for: context.requestName)
        let started = ContinuousClock.now
        return try await withThrowingTaskGroup(of: Finish.self) { group in
            group.addTask { .answer(attempt: 0, await Self.result { try await next(request, context) }) }
            group.addTask {
                try await Task.sleep(for: delay)
                return .timer
            }
            var sent = 1
            var running = 1
            var lastFailure: (any Error)?
            while let finished = try await group.next() {
                switch finished {
                case .timer:
                    guard sent <= maximumHedges, running > 0, mayHedge(deadline: context.deadline), tokens.withLock({ $0.withdraw() }) else { continue }
                    let index = sent
                    var hedged = context
                    hedged.attempt = context.attempt + index
                    if hedgesToFailover { hedged.failoverStep = index }
                    context.events.report(.hedgeSent) {
                        $0.attempt = index + 1
                        $0.delay = delay
                    }
                    group.addTask { .answer(attempt: index, await Self.result { try await next(request, hedged) }) }
                    sent += 1
                    running += 1
                    if sent <= maximumHedges {
                        group.addTask {
                            try await Task.sleep(for: delay)
                            return .timer
                        }
                    }
                case .answer(let index, .success(let raw)):
                    group.cancelAll()
                    // When a hedge wins, the first attempt's latency is at least this long: a
                    // lower bound, which keeps slow calls in the window.
                    record(.now - started, for: context.requestName)
                    if index > 0 { context.events.report(.hedgeWon) { $0.attempt = index + 1 } }
                    return raw
                case .answer(_, .failure(let error)):
                    running -= 1
                    lastFailure = error
                    if running == 0 {
                        group.cancelAll()
                        throw error
                    }
                }
            }
            throw lastFailure ?? CancellationError()
        }
    }

    /// Whether a hedge may start now: not at or after the call's deadline.
    private func mayHedge(deadline: ContinuousClock.Instant?) -> Bool {
        deadline.map { ContinuousClock.now < $0 } ?? true
    }

    private static func result(_ body: () async throws -> RawResponse) async -> Result<RawResponse, any Error> {
        do { return .success(try await body()) } catch { return .failure(error) }
    }

    /// Whether a request may run twice: an idempotent method or an `Idempotency-Key`, and a body
    /// that can be sent again.
    static func mayRunTwice(_ request: PreparedRequest) -> Bool {
        guard request.content?.isReplayable ?? true else { return false }
        switch request.method {
        case .get, .head, .options, .put, .delete: return true
        default: return request.headers[RetryMiddleware.idempotencyKey] != nil
        }
    }
}
