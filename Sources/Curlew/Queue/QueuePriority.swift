/// How urgently a queued request should start. Within one queue, a higher priority starts before
/// lower ones that are waiting; requests of equal priority start first-in, first-out.
public enum QueuePriority: Int, Sendable, Hashable, Comparable, CaseIterable {
    /// Starts after everything else waiting.
    case low = 0
    /// The default.
    case normal = 1
    /// Starts before normal and low.
    case high = 2

    /// Orders by urgency: `.low < .normal < .high`.
    public static func < (lhs: QueuePriority, rhs: QueuePriority) -> Bool { lhs.rawValue < rhs.rawValue }
}
