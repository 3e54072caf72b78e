internal import Foundation
public import HTTPTypes

/// Resends failed idempotent requests with exponential backoff and full jitter, honouring
/// `Retry-After` (seconds or an HTTP date), within a bound on attempts and on total time.
///
/// Retries connect-level failures and the statuses 408, 429, 502, 503 and 504 by default, for
/// `GET`, `HEAD`, `PUT`, `DELETE` and `OPTIONS`, and for any other method (`POST`, `PATCH`) only
/// when the request carries an `Idempotency-Key` header: the server's promise to run it once
/// whatever number of times it arrives (IETF `draft-ietf-httpapi-idempotency-key-header`, the
/// header Stripe and others accept). Set the header on the endpoint, or let the middleware add a
/// fresh key to each such call with ``addsIdempotencyKey``; every attempt of a call sends the
/// same key. A body that cannot be replayed (a one-shot stream) is never resent.
///
/// A connection failure the transport already retried with its own back-off
/// (``CurlTransport/Configuration/connectRetry``, ``/CurlewCore/TransferMetrics/connectionAttempts`` above 1)
/// is not retried again, so the two never multiply their attempts.
///
/// ```swift
/// let retry = RetryMiddleware(addsIdempotencyKey: true)   // POST and PATCH become retryable
/// ```
public struct RetryMiddleware: APIMiddleware {
    /// Attempts in all, the first included: `1` sends once and never retries. Less than 1 is
    /// refused: every call through the middleware fails with
    /// ``/CurlewCore/CurlewError/Code/invalidConnectionSettings`` (stage `configuration`) before
    /// anything is sent. Default: 3.
    public var maximumAttempts: Int
    /// The first backoff ceiling; it doubles per attempt. Zero to 365 days: a delay outside is
    /// refused like ``maximumAttempts`` below 1.
    public var baseDelay: Duration
    /// The largest single wait (also caps `Retry-After`). Zero to 365 days: one outside is
    /// refused like ``maximumAttempts`` below 1.
    public var maximumDelay: Duration
    /// No new attempt starts once this much time has passed since the first. More than zero:
    /// zero or less is refused like ``maximumAttempts`` below 1 (for no retry, set
    /// ``maximumAttempts`` to 1).
    public var maximumTotalTime: Duration
    /// Statuses worth retrying.
    public var retryableStatuses: Set<Int>
    /// Methods that may be resent.
    public var retryableMethods: Set<HTTPRequest.Method> {
        didSet { methodList = Array(retryableMethods) }
    }
    /// ``retryableMethods`` as an array, scanned by every call (a handful of methods).
    private var methodList: [HTTPRequest.Method]
    /// Whether a call whose method is not in ``retryableMethods`` and which has no
    /// `Idempotency-Key` gets one (a random UUID), making it retryable. Off by default: the
    /// server must honour the header, or a retried `POST` may run twice.
    public var addsIdempotencyKey: Bool

    /// Creates the policy.
    public init(
        maximumAttempts: Int = 3,
        baseDelay: Duration = .milliseconds(200),
        maximumDelay: Duration = .seconds(10),
        maximumTotalTime: Duration = .seconds(30),
        retryableStatuses: Set<Int> = [408, 429, 502, 503, 504],
        retryableMethods: Set<HTTPRequest.Method> = [.get, .head, .put, .delete, .options],
        addsIdempotencyKey: Bool = false
    ) {
        self.maximumAttempts = maximumAttempts
        self.baseDelay = baseDelay
        self.maximumDelay = maximumDelay
        self.maximumTotalTime = maximumTotalTime
        self.retryableStatuses = retryableStatuses
        self.retryableMethods = retryableMethods
        self.methodList = Array(retryableMethods)
        self.addsIdempotencyKey = addsIdempotencyKey
    }

    /// `.retry`.
    public var kind: MiddlewareKind { .retry }

    /// ``MiddlewarePhase/retry``.
    public var phase: MiddlewarePhase? { .retry }

    /// ``retryableStatuses`` as ``MiddlewareCapabilities/handledStatuses``.
    public var capabilities: MiddlewareCapabilities { MiddlewareCapabilities(handledStatuses: retryableStatuses) }

    /// Sends, waiting and resending while the failure is retryable.
    public nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        let longest = EasyHandleOptions.longestDuration
        guard maximumAttempts >= 1, baseDelay >= .zero, maximumDelay >= .zero, maximumTotalTime > .zero, baseDelay <= longest, maximumDelay <= longest
        else {
            throw refusal(request.summary)
        }
        var request = request
        if !isRetryable(request.method) {
            if request.headers[Self.idempotencyKey] == nil, addsIdempotencyKey {
                request.headers[Self.idempotencyKey] = UUID().uuidString
            }
            guard request.headers[Self.idempotencyKey] != nil else { return try await next(request, context) }
        }
        guard request.content?.isReplayable ?? true else { return try await next(request, context) }
        var context = context
        let started = ContinuousClock.now
        var attempt = 1
        while true {
            do {
                return try await next(request, context)
            } catch let error as CurlewError {
                guard attempt < maximumAttempts, isRetryable(error) else { throw error }
                let delay = self.delay(after: attempt, retryAfter: error.headers?[.retryAfter], date: error.headers?[.date])
                guard ContinuousClock.now - started + delay < maximumTotalTime else { throw error }
                // A retry never outlives the call's deadline: it could only fail with `.deadlineExceeded`.
                if let deadline = context.deadline, ContinuousClock.now + delay >= deadline { throw error }
                // Numbered after every attempt made so far, those of a resending middleware
                // inside included, like the `attempt` event that follows.
                let next = max(context.attempt, error.attempt ?? 0) + 1
                context.logger.debug("retry: \(request.summary) failed with \(error.code); attempt \(next) in \(delay)")
                context.events.report(.retryScheduled) { event in
                    event.attempt = next
                    event.delay = delay
                    event.error = error
                }
                try await Task.sleep(for: delay)
                attempt += 1
                context.attempt = next
            }
        }
    }

    /// `Idempotency-Key`: a request carrying it may be resent whatever its method.
    package static let idempotencyKey = HTTPField.Name("Idempotency-Key")!  // a literal token: never nil

    /// `retryableMethods.contains(method)` as a scan of ``methodList``: a few small-string
    /// comparisons instead of hashing the method's name on every call.
    private func isRetryable(_ method: HTTPRequest.Method) -> Bool {
        methodList.contains(method)
    }

    private func isRetryable(_ error: CurlewError) -> Bool {
        // A connection the transport already retried with its own back-off
        // (``/CurlewCore/ConnectRetryPolicy``) is not retried again: the attempts would multiply.
        if FailoverMiddleware.isConnectLevel(error.code) { return (error.metrics?.connectionAttempts ?? 1) <= 1 }
        if error.code == .unacceptableStatus, let status = error.status { return retryableStatuses.contains(status.code) }
        return false
    }

    /// The error for the first setting that cannot be honoured.
    private func refusal(_ request: RequestSummary) -> CurlewError {
        if maximumAttempts < 1 {
            return .refusedSetting(
                "RetryMiddleware.maximumAttempts", "at least 1 (1 sends once, without a retry)", "\(maximumAttempts)", request: request)
        }
        if baseDelay < .zero { return .refusedSetting("RetryMiddleware.baseDelay", "zero or more", "\(baseDelay)", request: request) }
        if maximumDelay < .zero { return .refusedSetting("RetryMiddleware.maximumDelay", "zero or more", "\(maximumDelay)", request: request) }
        // Longer has no millisecond count to wait for.
        if baseDelay > EasyHandleOptions.longestDuration {
            return .refusedSetting("RetryMiddleware.baseDelay", "at most 365 days", "\(baseDelay)", request: request)
        }
        if maximumDelay > EasyHandleOptions.longestDuration {
            return .refusedSetting("RetryMiddleware.maximumDelay", "at most 365 days", "\(maximumDelay)", request: request)
        }
        return .refusedSetting(
            "RetryMiddleware.maximumTotalTime", "more than zero (set maximumAttempts to 1 for no retry)", "\(maximumTotalTime)", request: request)
    }

    /// `Retry-After` when present (capped), else full jitter: random in 0…min(max, base·2^(n−1)).
    /// A `Retry-After` date counts from the answer's own `Date` when it has one, so a server
    /// whose clock is off from this machine's still gets the wait it asked for.
    func delay(after attempt: Int, retryAfter: String?, date: String? = nil) -> Duration {
        if let retryAfter, let seconds = Self.retryAfterSeconds(retryAfter, answeredAt: date.flatMap(ServerClock.parseHTTPDate)) {
            // Capped before the conversion: a server may name any number of seconds.
            let cap = Double(maximumDelay.components.seconds) + Double(maximumDelay.components.attoseconds) / 1e18
            return seconds >= cap ? maximumDelay : .milliseconds(Int(seconds * 1000))
        }
        let ceiling = min(baseDelay * (1 << min(attempt - 1, 20)), maximumDelay)
        let ceilingMilliseconds = max(1, Int(ceiling.components.seconds * 1000 + ceiling.components.attoseconds / 1_000_000_000_000_000))
        return .milliseconds(Int.random(in: 0...ceilingMilliseconds))
    }

    /// Seconds to wait from a `Retry-After` value: delta-seconds (`1*DIGIT`, RFC 9110 §10.2.3,
    /// so never `inf`, `-5` or `1e400`) or an HTTP date in any of its three forms, counted from
    /// `answeredAt` (the answer's `Date`) when known, else from now; `nil` for anything else.
    static func retryAfterSeconds(_ value: String, answeredAt: Date? = nil) -> Double? {
        let trimmed = value.trimmingCharacters(in: .whitespaces)
        if !trimmed.isEmpty, trimmed.utf8.allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }) {
            return Double(trimmed)
        }
        guard let date = ServerClock.parseHTTPDate(trimmed) else { return nil }
        return max(0, date.timeIntervalSince(answeredAt ?? Date()))
    }
}
