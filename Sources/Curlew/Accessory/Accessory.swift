/// HUD-style callbacks around a unit of work: a request, a batch or a chain.
///
/// Attach accessories client-wide in ``ClientConfiguration/accessories`` or per request in
/// ``RequestOptions/accessories``; a request turns them off with ``RequestOptions/usesAccessories``. A batch or
/// chain reports as one unit: its members do not report on their own.
///
/// ```swift
/// struct Spinner: Accessory {
///     func willStart(_ activity: Activity) { print("⏳", activity.name) }
///     func didStop(_ activity: Activity, outcome: Result<Void, any Error>, duration: Duration) {
///         let mark = if case .success = outcome { "✓" } else { "✗" }
///         print(mark, activity.name, duration)
///     }
/// }
/// ```
///
/// Callbacks run on the task doing the work, in order: `willStart`, then `willStop` and
/// `didStop` once it finished. Keep them quick. A download or upload also reports its progress
/// in between with ``didProgress(_:progress:)`` (see there); an accessory that does not draw
/// progress leaves it out.
public protocol Accessory: Sendable {
    /// The work is about to start.
    func willStart(_ activity: Activity)
    /// The work finished and its outcome is known — success, or the error (for a batch, a
    /// ``/CurlewCore/CurlewError`` with the code of the first member that failed other than by
    /// being cancelled, and the number of failed members in its message); called before
    /// ``didStop(_:outcome:duration:)``.
    func willStop(_ activity: Activity, outcome: Result<Void, any Error>)
    /// A download or upload moved bytes: the values a ``TransferProgressMonitor`` yields —
    /// monotonic, at most about 60 a second, the last one equal to the total when the request
    /// succeeds — called between `willStart` and `willStop`, one call at a time, never after
    /// `willStop`.
    ///
    /// Reported for a request whose response goes to a file (``APIClient/download(_:to:options:adjust:)``),
    /// that sends a body (uploads, forms), or that reports progress to a monitor; not for the
    /// members of a batch or chain. Called from the engine's event delivery or from the request's
    /// task, so keep it quick and synchronise what it changes.
    func didProgress(_ activity: Activity, progress: TransferProgress)
    /// The work has finished.
    func didStop(_ activity: Activity, outcome: Result<Void, any Error>, duration: Duration)
}

extension Accessory {
    /// Does nothing.
    public func willStart(_ activity: Activity) {}
    /// Does nothing.
    public func willStop(_ activity: Activity, outcome: Result<Void, any Error>) {}
    /// Does nothing.
    public func didProgress(_ activity: Activity, progress: TransferProgress) {}
    /// Does nothing.
    public func didStop(_ activity: Activity, outcome: Result<Void, any Error>, duration: Duration) {}
}

/// What an accessory is told about: one request, or a batch or chain as a whole.
public struct Activity: Sendable, Hashable, CustomStringConvertible {
    /// The kind of work.
    public enum Kind: String, Sendable, Hashable {
        /// One request.
        case request
        /// A batch of requests or operations.
        case batch
        /// A chain of steps.
        case chain
    }

    /// The kind of work.
    public var kind: Kind
    /// A display name: the request type's name, or `"batch of N"`, or the chain's first step.
    public var name: String
    /// For a request: method and redacted URL.
    public var request: RequestSummary?
    /// For a batch: how many members it has.
    public var memberCount: Int?

    /// Creates an activity.
    public init(kind: Kind, name: String, request: RequestSummary? = nil, memberCount: Int? = nil) {
        self.kind = kind
        self.name = name
        self.request = request
        self.memberCount = memberCount
    }

    /// `request SearchRequest (GET https://…)`.
    public var description: String {
        "\(kind.rawValue) \(name)" + (request.map { " (\($0))" } ?? "")
    }
}
