/// How a transport retries connection establishment that fails before anything was sent: the
/// server refused the connection, was unreachable, or reset the TLS handshake.
///
/// Such a retry is always safe — the request never left the machine — so it is on by default,
/// for every method. Attempts are spaced by an exponential back-off with jitter, and they stop at
/// ``maximumAttempts`` or when the next attempt would start after the call's total timeout
/// (``TransferOptions/totalTimeout``), whichever comes first; the last failure is then the
/// call's error, its message saying how many attempts were made. Each retry publishes a
/// `ClientEvent.Kind.connectRetryScheduled` event.
///
/// With the defaults a call rides out an upstream that is down for about four seconds (a restart,
/// a rolling deploy) instead of failing at once; a circuit breaker, when configured, takes over
/// for a longer outage. A connect timeout (``TransferOptions/connectTimeout``), a DNS failure or
/// a certificate that fails verification is not retried.
///
/// A request may lower or raise the maximum for itself with
/// ``TransferOptions/maximumConnectAttempts``; `FailoverMiddleware` sets it to 1 while another
/// origin is left, and `RetryMiddleware` does not retry again a connection retried here
/// (``TransferMetrics/connectionAttempts``).
///
/// A transport refuses a policy it cannot honour (fewer than one attempt, a negative delay, a
/// jitter outside 0…1): every call through it fails unsent with
/// ``CurlewError/Code/invalidConnectionSettings`` naming the setting.
public struct ConnectRetryPolicy: Sendable, Hashable {
    /// Most connection attempts per call, the first included; 1 turns retries off. Default: 10.
    public var maximumAttempts: Int
    /// The delay before the second attempt; each later delay doubles. Default: 50 ms.
    public var initialDelay: Duration
    /// The longest delay between two attempts. Default: 1 s.
    public var maximumDelay: Duration
    /// How much a delay varies at random, as a fraction of it (0.2: between 80 % and 120 %), so
    /// many calls retrying together do not reconnect in step. Default: 0.2.
    public var jitter: Double

    /// Creates a policy.
    public init(
        maximumAttempts: Int = 10, initialDelay: Duration = .milliseconds(50), maximumDelay: Duration = .seconds(1),
        jitter: Double = 0.2
    ) {
        self.maximumAttempts = maximumAttempts
        self.initialDelay = initialDelay
        self.maximumDelay = maximumDelay
        self.jitter = jitter
    }

    /// The default: up to ten attempts, 50 ms doubling to at most 1 s, ±20 % jitter.
    public static let standard = ConnectRetryPolicy()

    /// No retries: a failed connection fails the call at once.
    public static let disabled = ConnectRetryPolicy(maximumAttempts: 1)

    /// The delay in nanoseconds before attempt `attempt` (2 for the first retry), with `random`
    /// in 0..<1 choosing the jitter.
    package func delayNanoseconds(beforeAttempt attempt: Int, random: Double) -> UInt64 {
        let initial = Double(Self.nanoseconds(initialDelay))
        let cap = Double(Self.nanoseconds(maximumDelay))
        let doublings = Double(max(0, min(attempt - 2, 62)))
        let base = min(cap, initial * pow2(doublings))
        let spread = min(1, max(0, jitter))
        let factor = 1 - spread + 2 * spread * min(1, max(0, random))
        return UInt64(max(0, base * factor))
    }

    private func pow2(_ exponent: Double) -> Double {
        var result = 1.0
        var remaining = Int(exponent)
        while remaining > 0 {
            result *= 2
            remaining -= 1
        }
        return result
    }

    private static func nanoseconds(_ duration: Duration) -> UInt64 {
        UInt64(max(0, duration.saturatingNanoseconds))
    }
}
