internal import Synchronization

/// Orders a caller's submission against its cancellation, which may run first
/// (`withTaskCancellationHandler` runs `onCancel` immediately for an already-cancelled task).
package final class TransferTicket: Sendable {
    package enum Phase { case created, submitted, cancelled }

    package let id: UInt64
    private let phase = Mutex(Phase.created)

    package init(id: UInt64) { self.id = id }

    /// Marks the ticket submitted; returns `false` if it was cancelled first.
    package func markSubmitted() -> Bool {
        phase.withLock { phase in
            guard case .created = phase else { return false }
            phase = .submitted
            return true
        }
    }

    /// Marks the ticket cancelled; returns `true` if the engine already has the transfer and must
    /// be told to remove it.
    package func markCancelled() -> Bool {
        phase.withLock { phase in
            defer { phase = .cancelled }
            if case .submitted = phase { return true }
            return false
        }
    }
}
