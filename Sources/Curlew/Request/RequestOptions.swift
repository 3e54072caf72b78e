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
    /// The values, in a copy-on-write box (the idiom of every value the request path copies):
    /// copying options (the client does it several times per call) costs one reference count,
    /// not one per field, and a setter on an unshared value writes in place.
    struct Fields: Sendable {
        var queue: String?
        var priority: QueuePriority
        var requiresAuthentication: Bool
        var middleware: [any APIMiddleware]
        var skippedMiddleware: Set<MiddlewareKind>
        var accessories: [any Accessory]
        var usesAccessories: Bool
        var totalTimeout: Duration?
        var maximumBodySize: Int?
        var volatileParameters: Set<String>
        var trustedOrigins: Set<String>
        var ticket: RequestTracker.Ticket?
        /// ``requestName``: stored, not an extension, so a named call (every generated
        /// OpenAPI call is one) keeps ``extensions`` empty and every other option's lookup free.
        var requestName: String?
        var extensions: [ObjectIdentifier: any Sendable] = [:]
    }

    private var box: CopyOnWriteBox<Fields>

    /// The ``QueueActor`` queue the call waits in; `nil` for none (not limited). An empty name
    /// fails the call with ``/CurlewCore/CurlewError/Code/invalidQueueName`` before anything is sent.
    public var queue: String? {
        get { box.value.queue }
        set { box.value.queue = newValue }
    }
    /// Where the call stands among waiters of its queue.
    public var priority: QueuePriority {
        get { box.value.priority }
        set { box.value.priority = newValue }
    }
    /// Whether the call needs a credential. On a client without an
    /// ``AuthorizationMiddleware`` it fails with `.missingCredentialSource` before anything is
    /// sent; with one and no credential, with `.notLoggedIn`.
    public var requiresAuthentication: Bool {
        get { box.value.requiresAuthentication }
        set { box.value.requiresAuthentication = newValue }
    }
    /// Middleware for this call only, inside the client's.
    public var middleware: [any APIMiddleware] {
        get { box.value.middleware }
        set { box.value.middleware = newValue }
    }
    /// Kinds of client middleware this call skips.
    public var skippedMiddleware: Set<MiddlewareKind> {
        get { box.value.skippedMiddleware }
        set { box.value.skippedMiddleware = newValue }
    }
    /// Accessories for this call in addition to the client's.
    public var accessories: [any Accessory] {
        get { box.value.accessories }
        set { box.value.accessories = newValue }
    }
    /// Whether accessories (the client's and the call's) see this call.
    public var usesAccessories: Bool {
        get { box.value.usesAccessories }
        set { box.value.usesAccessories = newValue }
    }
    /// Longest time for the whole exchange for this call, overriding the client's
    /// ``/CurlewCore/TransferOptions/totalTimeout`` (the same name on both levels; `nil` keeps the client's).
    /// The other three timeouts — ``connectTimeout``, ``headTimeout``, ``idleTimeout`` — work
    /// the same way, each with its own error code.
    public var totalTimeout: Duration? {
        get { box.value.totalTimeout }
        set { box.value.totalTimeout = newValue }
    }
    /// Largest accepted response body, overriding ``/CurlewCore/TransferOptions/maximumBodySize``.
    public var maximumBodySize: Int? {
        get { box.value.maximumBodySize }
        set { box.value.maximumBodySize = newValue }
    }
    /// Query parameters left out of the call's ``RequestIdentity`` (timestamps, locations…).
    public var volatileParameters: Set<String> {
        get { box.value.volatileParameters }
        set { box.value.volatileParameters = newValue }
    }
    /// Origins besides the client's own (base URL, failover URLs, configured trusted origins) that
    /// may receive its credentials, signature and common arguments, as `scheme://host[:port]`.
    public var trustedOrigins: Set<String> {
        get { box.value.trustedOrigins }
        set { box.value.trustedOrigins = newValue }
    }
    /// A ticket from a ``RequestTracker``: the tracker counts this call until it finishes.
    public var ticket: RequestTracker.Ticket? {
        get { box.value.ticket }
        set { box.value.ticket = newValue }
    }
    /// The name this call's events, log lines, metrics and spans carry instead of the endpoint
    /// type's name; `nil` (the default) keeps the type's name.
    ///
    /// For a generic endpoint type that stands for many operations — `CurlewOpenAPI`'s transport
    /// sends every generated operation through one type and names each call after its
    /// `operationID`. Keep the set of names small: metrics are labelled with it.
    package var requestName: String? {
        get { box.value.requestName }
        set { box.value.requestName = newValue }
    }

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
    package subscript<Key: RequestOptionKey>(key: Key.Type) -> Key.Value {
        get {
            // Most calls set no option of this kind: no hashing and no dynamic cast then.
            let extensions = box.value.extensions
            if extensions.isEmpty { return Key.defaultValue }
            // Unwrapped before the cast: casting the optional itself costs a dynamic cast even
            // when the option is not set.
            guard let value = extensions[ObjectIdentifier(key)] else { return Key.defaultValue }
            return value as? Key.Value ?? Key.defaultValue
        }
        set { box.value.extensions[ObjectIdentifier(key)] = newValue }
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
        totalTimeout: Duration? = nil,
        maximumBodySize: Int? = nil,
        volatileParameters: Set<String> = [],
        trustedOrigins: Set<String> = [],
        ticket: RequestTracker.Ticket? = nil
    ) {
        self.box = CopyOnWriteBox(
            Fields(
                queue: queue, priority: priority, requiresAuthentication: requiresAuthentication, middleware: middleware, skippedMiddleware: skippedMiddleware, accessories: accessories, usesAccessories: usesAccessories,
                totalTimeout: totalTimeout, maximumBodySize: maximumBodySize, volatileParameters: volatileParameters, trustedOrigins: trustedOrigins, ticket: ticket, requestName: nil))
    }

    /// No special policy, shared: what ``Endpoint/options`` returns by default.
    public static let standard = RequestOptions()
}

/// Declares an option that lives in ``RequestOptions`` without a stored property of its own, so
/// a capability (the cache, mocks, downloads) adds its per-call policy in its own file.
package protocol RequestOptionKey {
    /// The option's type.
    associatedtype Value: Sendable
    /// The value when nobody set one.
    static var defaultValue: Value { get }
}
