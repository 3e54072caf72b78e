/// Where a built-in middleware belongs, outermost first. The ``APIClient`` sorts the middleware
/// that have a phase into these places (stably), and leaves the others where they were
/// registered:
///
/// cache → token refresh → hedging → limiter → circuit breaker → retry → failover → URL rewrite → authorization → common arguments →
/// server clock → signing → (status and envelope checks) → transport.
///
/// Why this order: refresh must be outside authorization so each resend carries the fresh token;
/// the circuit breaker outside retry so an open breaker stops retries too; retry outside failover so a back-off follows a full round of mirrors; everything that changes
/// the URL or the parameters runs before signing, which must see the final request.
public struct MiddlewarePhase: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The rank: lower runs further out.
    public let rank: Int
    /// The phase's name.
    public let name: String

    /// Creates a phase; use it to place your own middleware among the built-ins.
    public init(rank: Int, name: String) {
        self.rank = rank
        self.name = name
    }

    /// A response cache (answers from stored bytes above signing, so volatile parameters never
    /// reach its key).
    public static let cache = MiddlewarePhase(rank: 100, name: "cache")
    /// ``TokenRefreshMiddleware``.
    public static let tokenRefresh = MiddlewarePhase(rank: 200, name: "tokenRefresh")
    /// `HedgingMiddleware` (`CurlewResilience`): outside the breaker and retry, so each hedge is a whole call below it.
    public static let hedging = MiddlewarePhase(rank: 220, name: "hedging")
    /// `AdaptiveConcurrencyMiddleware` (`CurlewResilience`): a call holds one slot for all its attempts.
    public static let limiter = MiddlewarePhase(rank: 240, name: "limiter")
    /// `CircuitBreakerMiddleware` (`CurlewResilience`): outside retry, so a call is one outcome and an open breaker
    /// keeps retries from starting.
    public static let circuitBreaker = MiddlewarePhase(rank: 250, name: "circuitBreaker")
    /// ``RetryMiddleware``.
    public static let retry = MiddlewarePhase(rank: 300, name: "retry")
    /// ``FailoverMiddleware``.
    public static let failover = MiddlewarePhase(rank: 350, name: "failover")
    /// ``URLRewriteMiddleware``.
    public static let urlRewrite = MiddlewarePhase(rank: 380, name: "urlRewrite")
    /// ``AuthorizationMiddleware``.
    public static let authorization = MiddlewarePhase(rank: 400, name: "authorization")
    /// ``CommonArgumentsMiddleware``.
    public static let commonArguments = MiddlewarePhase(rank: 500, name: "commonArguments")
    /// ``ServerClock``.
    public static let serverClock = MiddlewarePhase(rank: 600, name: "serverClock")
    /// ``SigningMiddleware``: last, so the signature covers everything sent.
    public static let signing = MiddlewarePhase(rank: 900, name: "signing")

    /// Lower ranks first.
    public static func < (lhs: MiddlewarePhase, rhs: MiddlewarePhase) -> Bool { lhs.rank < rhs.rank }

    /// The name.
    public var description: String { name }
}

/// Puts middleware that have a phase into phase order, in the slots they occupy; the others keep
/// their exact positions.
enum MiddlewareArrangement {
    static func arrange(_ middleware: [any APIMiddleware]) -> [any APIMiddleware] {
        let phased = middleware.indices.compactMap { index in middleware[index].phase.map { (slot: index, phase: $0) } }
        guard phased.count > 1 else { return middleware }
        let order = phased.sorted { $0.phase != $1.phase ? $0.phase < $1.phase : $0.slot < $1.slot }
        var arranged = middleware
        for (target, source) in zip(phased, order) { arranged[target.slot] = middleware[source.slot] }
        return arranged
    }
}
