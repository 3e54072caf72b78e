/// How a batch runs.
public struct BatchOptions: Sendable, Hashable {
    /// Whether the first failure cancels the rest, which then fail with `CancellationError`. Default:
    /// `false`, run everything and report each result.
    public var failsFast: Bool
    /// Most members running at once, `nil` for all at once.
    public var maximumConcurrency: Int?
    /// A deadline for the whole batch: members finished by then keep their results, the rest
    /// fail with `.totalTimeout`.
    public var deadline: Duration?

    /// Creates options.
    public init(failsFast: Bool = false, maximumConcurrency: Int? = nil, deadline: Duration? = nil) {
        self.failsFast = failsFast
        self.maximumConcurrency = maximumConcurrency
        self.deadline = deadline
    }
}
