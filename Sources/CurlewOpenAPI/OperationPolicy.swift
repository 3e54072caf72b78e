public import Curlew

/// How one OpenAPI operation is sent: Curlew's per-call `RequestOptions` (queue and
/// priority, the four timeouts, cache policy, added or skipped middleware such as a retry policy
/// of its own, whether login is required) plus where the response body goes.
///
/// Set per `operationID` in one place, ``CurlewTransport/Configuration/operations``, without
/// touching generated code:
///
/// ```swift
/// var configuration = CurlewTransport.Configuration()
/// configuration.operations["listPets"] = OperationPolicy(options: RequestOptions(queue: "catalog", totalTimeout: .seconds(5)))
/// var export = RequestOptions()
/// export.idleTimeout = .seconds(15)                   // the stall timeout
/// configuration.operations["exportPets"] = OperationPolicy(options: export, responseBody: .stream(highWaterMark: 4 << 20))
/// ```
public struct OperationPolicy: Sendable {
    /// Curlew's per-call options: `RequestOptions.queue`, `RequestOptions.priority`,
    /// `RequestOptions.totalTimeout` (`.totalTimeout` when it passes; for a streamed
    /// body it covers the reading too), `RequestOptions.connectTimeout`,
    /// `RequestOptions.headTimeout`, `RequestOptions.idleTimeout` (the stall timeout: no byte
    /// received or sent for that long, `.idleTimeout`), `RequestOptions.cache`,
    /// `RequestOptions.middleware` (a `RetryMiddleware` for this operation only),
    /// `RequestOptions.skippedMiddleware` (`[.retry]` to never retry it),
    /// `RequestOptions.requiresAuthentication`, `RequestOptions.maximumBodySize` (the
    /// response body's limit, collected or streamed: past it the call, or the body's reading,
    /// fails with `.bodyTooLarge`).
    public var options: RequestOptions
    /// Where the response body goes.
    public var responseBody: ResponseBodyHandling

    /// Where an operation's response body goes.
    public enum ResponseBodyHandling: Sendable, Hashable {
        /// Streamed (1 MiB high-water mark), unless the operation's cache policy is not
        /// `.networkOnly`: the cache stores and serves whole bodies, so those are collected.
        case automatic
        /// Delivered while it arrives, as a `.single` `HTTPBody`; the transfer pauses while more
        /// than `highWaterMark` bytes are unread (at least 16 KiB). The cache cannot take part:
        /// a cache policy other than `.networkOnly` fails with `.cachePolicyConflict`. The
        /// client's `TransferOptions.maximumBodySize` does not apply (the body is never held
        /// whole); the operation's `RequestOptions.maximumBodySize` does: a body announced
        /// longer fails the call, and one that grows past it fails its reading, with
        /// `.bodyTooLarge`.
        case stream(highWaterMark: Int)
        /// Collected in memory (up to `TransferOptions.maximumBodySize`, or
        /// `RequestOptions.maximumBodySize`) and delivered as a `.multiple` `HTTPBody`
        /// that can be read more than once (by a logging middleware and the generated code).
        case collect

        /// Streamed with this high-water mark, or collected (`nil`); `.automatic` is decided by
        /// the cache policy.
        func streamingHighWaterMark(cache: CachePolicy) -> Int? {
            switch self {
            case .automatic: cache == .networkOnly ? 1 << 20 : nil
            case .stream(let highWaterMark): highWaterMark
            case .collect: nil
            }
        }
    }

    /// Creates a policy; every parameter defaults to "as the client is configured".
    public init(options: RequestOptions = RequestOptions(), responseBody: ResponseBodyHandling = .automatic) {
        self.options = options
        self.responseBody = responseBody
    }
}

extension CurlewTransport {
    /// The transport's per-operation policy and limits.
    public struct Configuration: Sendable {
        /// The policy of operations not listed in ``operations``.
        public var defaultPolicy: OperationPolicy
        /// Policies by `operationID` (the generated `Operations.<name>.id`).
        public var operations: [String: OperationPolicy]
        /// A `.multiple` request body of known length up to this many bytes is read into memory
        /// before sending (cheaper than streaming it); longer ones, and bodies of unknown length,
        /// are streamed. Default: 1 MiB.
        public var requestBodyBufferingLimit: Int
        /// The statuses shown to Curlew's middleware as errors (so they retry or refresh) before
        /// reaching the generated client as responses. `nil` (the default): the
        /// `MiddlewareCapabilities.handledStatuses` that the client's and the operation's
        /// middleware declare (`RetryMiddleware.retryableStatuses`,
        /// `TokenRefreshMiddleware.refreshStatuses` and `sessionEndedStatuses`, and those of a
        /// middleware of your own); set it to override them.
        public var middlewareStatuses: Set<Int>?

        /// Creates a configuration.
        /// - Parameters:
        ///   - defaultPolicy: The policy of operations not in `operations`.
        ///   - operations: Policies by `operationID`.
        ///   - requestBodyBufferingLimit: See ``requestBodyBufferingLimit``.
        ///   - middlewareStatuses: See ``middlewareStatuses``.
        public init(
            defaultPolicy: OperationPolicy = OperationPolicy(), operations: [String: OperationPolicy] = [:], requestBodyBufferingLimit: Int = 1 << 20,
            middlewareStatuses: Set<Int>? = nil
        ) {
            self.defaultPolicy = defaultPolicy
            self.operations = operations
            self.requestBodyBufferingLimit = max(0, requestBodyBufferingLimit)
            self.middlewareStatuses = middlewareStatuses
        }

        /// The policy of `operationID`: its entry in ``operations``, else ``defaultPolicy``.
        public func policy(for operationID: String) -> OperationPolicy {
            operations[operationID] ?? defaultPolicy
        }
    }
}
