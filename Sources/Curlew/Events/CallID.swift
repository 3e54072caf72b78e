internal import Synchronization

/// Names one call of ``APIClient/send(_:)`` (or `response`, a batch member, a chain step) from
/// the moment it starts until it finishes, across every attempt, redirect and retry.
///
/// Every ``ClientEvent`` of the call carries it, the ``TransportContext`` hands it to the
/// transport, and a ``RequestTracker`` ticket can name it before the call starts.
public struct CallID: Hashable, Sendable, Comparable, CustomStringConvertible {
    /// The number, unique within the process, increasing in the order calls started.
    public let rawValue: UInt64

    /// Wraps a number (tests and custom transports).
    public init(rawValue: UInt64) { self.rawValue = rawValue }

    /// A new id, never handed out before in this process.
    public static func next() -> CallID {
        CallID(rawValue: counter.wrappingAdd(1, ordering: .relaxed).oldValue)
    }

    private static let counter = Atomic<UInt64>(1)

    /// `#` followed by the number.
    public var description: String { "#\(rawValue)" }

    /// Orders ids by when their calls started.
    public static func < (lhs: CallID, rhs: CallID) -> Bool { lhs.rawValue < rhs.rawValue }
}
