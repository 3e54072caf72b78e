/// Names a kind of middleware so a call can skip it (`RequestOptions.skippedMiddleware`).
public struct MiddlewareKind: Hashable, Sendable, CustomStringConvertible {
    /// The kind's name.
    public let name: String

    /// Creates a kind.
    public init(_ name: String) { self.name = name }

    /// `AuthorizationMiddleware`.
    public static let authorization = MiddlewareKind("authorization")
    /// `SigningMiddleware`.
    public static let signing = MiddlewareKind("signing")
    /// `CommonArgumentsMiddleware`.
    public static let commonArguments = MiddlewareKind("commonArguments")
    /// `TokenRefreshMiddleware`.
    public static let tokenRefresh = MiddlewareKind("tokenRefresh")
    /// `ServerClock`.
    public static let serverClock = MiddlewareKind("serverClock")
    /// `FailoverMiddleware`.
    public static let failover = MiddlewareKind("failover")
    /// `URLRewriteMiddleware`.
    public static let urlRewrite = MiddlewareKind("urlRewrite")
    /// `RetryMiddleware`.
    public static let retry = MiddlewareKind("retry")
    /// `HedgingMiddleware`.
    public static let hedging = MiddlewareKind("hedging")
    /// `AdaptiveConcurrencyMiddleware`.
    public static let limiter = MiddlewareKind("limiter")
    /// `CircuitBreakerMiddleware`.
    public static let circuitBreaker = MiddlewareKind("circuitBreaker")

    /// The name.
    public var description: String { name }
}
