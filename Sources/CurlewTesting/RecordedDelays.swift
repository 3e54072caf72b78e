import Synchronization

/// A ``MockClock`` for tests that records the delays mocks ask for and returns at once, so a test
/// asserts the delay without depending on timing.
///
/// ```swift
/// let delays = RecordedDelays()
/// let response = try await client.send(SearchRequest(key: "fog")) {
///     $0.mock = .fixtures(store).clock(delays.clock)
///     $0.mockScenario = "slow"
/// }
/// #expect(delays.requested == [.milliseconds(1500)])
/// ```
public final class RecordedDelays: Sendable {
    /// The delays asked for, in order. Guarded by its own mutex.
    private let recorded = Mutex<[Duration]>([])

    /// Creates an empty record.
    public init() {}

    /// The delays asked for so far, in order.
    public var requested: [Duration] { recorded.withLock { $0 } }

    /// The clock to give a ``MockMode`` (``MockMode/clock(_:)``).
    public var clock: MockClock {
        MockClock { [self] delay in
            recorded.withLock { $0.append(delay) }
            try Task.checkCancellation()
        }
    }
}
