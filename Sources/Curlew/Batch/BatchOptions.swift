/// How a batch runs.
public struct BatchOptions: Sendable, Hashable {
    /// What happens after a member fails.
    public enum Mode: Sendable, Hashable {
        /// Run everything; report each result (the default).
        case collectAll
        /// The first failure cancels the rest, which fail with `.cancelled`.
        case failFast
    }

    /// Collect-all or fail-fast.
    public var mode: Mode
    /// Most members running at once, `nil` for all at once.
    public var maximumConcurrency: Int?
    /// A deadline for the whole batch: members finished by then keep their results, the rest
    /// fail with `.totalTimeout`.
    public var deadline: Duration?

    /// Creates options.
    public init(mode: Mode = .collectAll, maximumConcurrency: Int? = nil, deadline: Duration? = nil) {
        self.mode = mode
        self.maximumConcurrency = maximumConcurrency
        self.deadline = deadline
    }
}
