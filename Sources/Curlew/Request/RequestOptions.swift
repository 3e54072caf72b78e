/// Per-request policy, in one value: which queue and priority, whether login is required, which
/// middleware are added or skipped, accessories, limits, which query parameters are volatile, and
/// which other origins may receive the client's credentials.
///
/// An endpoint type declares its defaults in ``Endpoint/options``; a call site adjusts them for
/// one call without losing the rest:
///
/// ```swift
/// struct ProfileRequest: Endpoint {
///     typealias Response = Profile
///     var path: String { "me" }
///     var options: RequestOptions { RequestOptions(requiresAuthentication: true) }
/// }
///
/// let profile = try await client.send(ProfileRequest()) { $0.queue = "profile"; $0.priority = .high }
/// ```
///
/// The wire description (method, path, parameters, headers, body) and the decoding hooks stay on
/// the ``Endpoint``; everything about *how* it is sent lives here.
public struct RequestOptions: Sendable {
    /// The ``QueueActor`` queue the call waits in; `nil` for none (not limited).
    public var queue: String?
    /// Where the call stands among waiters of its queue.
    public var priority: QueuePriority
    /// Whether the call needs a credential (LSBaseRequest's `isLogin`). On a client without an
    /// ``AuthorizationMiddleware`` it fails with `.missingCredentialSource` before anything is
    /// sent; with one and no credential, with `.notLoggedIn`.
    public var requiresAuthentication: Bool
    /// Middleware for this call only, inside the client's.
    public var middleware: [any APIMiddleware]
    /// Kinds of client middleware this call skips.
    public var skippedMiddleware: Set<MiddlewareKind>
    /// Accessories for this call in addition to the client's.
    public var accessories: [any Accessory]
    /// Whether accessories (the client's and the call's) see this call (LCNetwork's
    /// `invalidAccessory` inverted).
    public var usesAccessories: Bool
    /// Longest time for the whole exchange, overriding ``TransferOptions/totalTimeout``.
    public var timeout: Duration?
    /// Largest accepted response body, overriding ``TransferOptions/maximumBodySize``.
    public var maximumBodySize: Int?
    /// Query parameters left out of the call's ``RequestIdentity`` (timestamps, locations…).
    public var volatileParameters: Set<String>
    /// Origins besides the client's own (base URL, failover URLs, configured trusted origins) that
    /// may receive its credentials, signature and common arguments, as `scheme://host[:port]`.
    public var trustedOrigins: Set<String>
    /// A ticket from a ``RequestTracker``: the tracker counts this call until it finishes.
    public var ticket: RequestTracker.Ticket?
    /// Options that capabilities add (cache policy, mock scenario…), by key type.
    private var extensions: [ObjectIdentifier: any Sendable] = [:]

    /// The value of an option a capability declares with a ``RequestOptionKey``, or the key's
    /// default. Capabilities expose their options as properties built on this subscript:
    ///
    /// ```swift
    /// enum RetryBudgetKey: RequestOptionKey { static let defaultValue = 3 }
    /// extension RequestOptions {
    ///     var retryBudget: Int {
    ///         get { self[RetryBudgetKey.self] }
    ///         set { self[RetryBudgetKey.self] = newValue }
    ///     }
    /// }
    /// ```
    public subscript<Key: RequestOptionKey>(key: Key.Type) -> Key.Value {
        get { extensions[ObjectIdentifier(key)] as? Key.Value ?? Key.defaultValue }
        set { extensions[ObjectIdentifier(key)] = newValue }
    }

    /// Creates options; every parameter defaults to "no special policy".
    public init(
        queue: String? = nil,
        priority: QueuePriority = .normal,
        requiresAuthentication: Bool = false,
        middleware: [any APIMiddleware] = [],
        skippedMiddleware: Set<MiddlewareKind> = [],
        accessories: [any Accessory] = [],
        usesAccessories: Bool = true,
        timeout: Duration? = nil,
        maximumBodySize: Int? = nil,
        volatileParameters: Set<String> = [],
        trustedOrigins: Set<String> = [],
        ticket: RequestTracker.Ticket? = nil
    ) {
        self.queue = queue
        self.priority = priority
        self.requiresAuthentication = requiresAuthentication
        self.middleware = middleware
        self.skippedMiddleware = skippedMiddleware
        self.accessories = accessories
        self.usesAccessories = usesAccessories
        self.timeout = timeout
        self.maximumBodySize = maximumBodySize
        self.volatileParameters = volatileParameters
        self.trustedOrigins = trustedOrigins
        self.ticket = ticket
    }
}

/// Declares an option that lives in ``RequestOptions`` without a stored property of its own, so
/// a capability (the cache, mocks, downloads) adds its per-call policy in its own file.
public protocol RequestOptionKey {
    /// The option's type.
    associatedtype Value: Sendable
    /// The value when nobody set one.
    static var defaultValue: Value { get }
}
