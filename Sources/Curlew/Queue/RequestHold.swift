/// Makes a call hold the calls that start after it until it ends, set per
/// call in ``RequestOptions/holdsLaterRequests`` on a client with a
/// ``RequestHolds`` middleware.
///
/// ```swift
/// let session = try await client.send(Login(user: "ines")) {
///     $0.holdsLaterRequests = RequestHold(tag: "login", release: .onSuccess)
/// }
/// ```
public struct RequestHold: Sendable, Hashable {
    /// What happens to the held calls when the holding call ends.
    public enum Release: Sendable, Hashable {
        /// They start, whatever the outcome.
        case whenFinished
        /// They start if it succeeded, and fail with `CancellationError` if it failed. Success is
        /// what the caller gets: a response whose body cannot be decoded (a `200` with a login
        /// page instead of the session) fails the call, and the held calls with it. When several
        /// calls hold under one tag, the hold ends with the last of them, and the held calls
        /// start if any of them succeeded.
        case onSuccess
        /// They wait for ``RequestHolds/release(_:)`` or ``RequestHolds/cancel(_:)``.
        case manually
    }

    /// Names the hold, for ``RequestHolds/release(_:)`` and ``RequestHolds/cancel(_:)``.
    public var tag: String
    /// What ends the hold.
    public var release: Release

    /// Creates a hold.
    public init(tag: String, release: Release = .whenFinished) {
        self.tag = tag
        self.release = release
    }
}

enum RequestHoldKey: RequestOptionKey {
    static let defaultValue: RequestHold? = nil
}

enum IgnoresHoldsKey: RequestOptionKey {
    static let defaultValue = false
}

extension RequestOptions {
    /// When set, this call holds every call that starts after it on the same ``RequestHolds``
    /// until it ends. Default: `nil`.
    public var holdsLaterRequests: RequestHold? {
        get { self[RequestHoldKey.self] }
        set { self[RequestHoldKey.self] = newValue }
    }

    /// Whether this call passes holds by (a health check, a call the holder itself waits for).
    /// Default: `false`.
    public var ignoresHolds: Bool {
        get { self[IgnoresHoldsKey.self] }
        set { self[IgnoresHoldsKey.self] = newValue }
    }
}

extension ClientEvent.Kind {
    /// A call waits for a hold; ``ClientEvent/reason`` is `"held by <tag>"`.
    public static let requestHeld = ClientEvent.Kind("requestHeld")
}

extension MiddlewareKind {
    /// ``RequestHolds``.
    public static let holds = MiddlewareKind("holds")
}

extension MiddlewarePhase {
    /// ``RequestHolds``: before everything else, so a held call has not
    /// been counted, cached or signed yet.
    public static let scheduling = MiddlewarePhase(rank: 50, name: "scheduling")
}
