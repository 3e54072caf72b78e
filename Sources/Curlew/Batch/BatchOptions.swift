/// How a batch runs.
///
/// Settings a batch cannot honour — a ``maximumConcurrency`` below 1, a ``deadline`` of zero or
/// less — are refused, not clamped: every member fails unsent with
/// ``/CurlewCore/CurlewError/Code/invalidConnectionSettings`` (stage `configuration`), its message
/// naming the setting and its value.
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

extension BatchOptions {
    /// The error every member fails with when a setting cannot be honoured, `nil` otherwise.
    func refusal() -> CurlewError? {
        if let maximumConcurrency, maximumConcurrency < 1 {
            return .refusedSetting("BatchOptions.maximumConcurrency", "at least 1 (nil runs every member at once)", "\(maximumConcurrency)", request: nil)
        }
        if let deadline, deadline <= .zero {
            return .refusedSetting("BatchOptions.deadline", "longer than zero", "\(deadline)", request: nil)
        }
        return nil
    }
}
