/// How a mock waits out an answer's ``MockAnswer/delay``: really (``continuous``), not at all
/// (``immediate``), or however a test wants — a test passes a clock that
/// records the delays it was asked for instead of sleeping, so nothing depends on timing.
///
/// ```swift
/// let delays = Mutex<[Duration]>([])
/// let clock = MockClock { delay in delays.withLock { $0.append(delay) } }
/// ```
public struct MockClock: Sendable {
    /// Waits for a delay; throws `CancellationError` when the task is cancelled.
    public let sleep: @Sendable (Duration) async throws -> Void

    /// Creates a clock from a sleeping function.
    public init(sleep: @escaping @Sendable (Duration) async throws -> Void) {
        self.sleep = sleep
    }

    /// Sleeps for the delay (cancellable). The default.
    public static let continuous = MockClock { try await Task.sleep(for: $0) }

    /// Ignores delays: every answer comes at once.
    public static let immediate = MockClock { _ in try Task.checkCancellation() }
}
