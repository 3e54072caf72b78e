internal import Synchronization

/// A slot of a named queue that a call holds past its return: a streamed call is running until
/// its body has arrived, so it keeps its slot until then.
///
/// Given back exactly once: by the call, when it ends without a streamed body to keep it for
/// (``giveBackUnlessKept()``), or when the body it was kept for ends — read to its end, failed,
/// or stopped because its reader cancelled or dropped it (``keep(for:)``).
final class QueueSlot: Sendable {
    private enum State: UInt8, AtomicRepresentable {
        case heldByCall, keptForBody, givenBack
    }

    private let queue: String
    private let queues: QueueActor
    /// Who holds the slot; changed only by compare-and-exchange, so one of the two owners gives
    /// it back.
    private let state = Atomic(State.heldByCall)

    init(_ queue: String, of queues: QueueActor) {
        self.queue = queue
        self.queues = queues
    }

    /// Keeps the slot until the body of `response` ends, when it is a stream; does nothing
    /// otherwise.
    func keep(for response: RawResponse) {
        guard case .stream(let body) = response.content,
            state.compareExchange(expected: .heldByCall, desired: .keptForBody, ordering: .acquiringAndReleasing).exchanged
        else { return }
        body.whenEnded { [self] _ in
            if state.compareExchange(expected: .keptForBody, desired: .givenBack, ordering: .acquiringAndReleasing).exchanged {
                queues.leave(queue)
            }
        }
    }

    /// Gives the slot back unless ``keep(for:)`` kept it for a body.
    func giveBackUnlessKept() {
        if state.compareExchange(expected: .heldByCall, desired: .givenBack, ordering: .acquiringAndReleasing).exchanged {
            queues.leave(queue)
        }
    }
}

/// An error that hands the call's response on to its caller (`CurlewOpenAPI`'s forwarded status
/// answer, which the generated client receives as a response): a streamed body in it keeps the
/// call's queue slot until it ends, as a returned one does.
package protocol ResponseCarryingError: Error {
    /// The response the caller receives.
    var response: RawResponse { get }
}

extension QueueSlot {
    /// Keeps the slot for the streamed body of the response `error` carries (directly or under
    /// a `CurlewError`'s ``/CurlewCore/CurlewError/underlying`` chain), if any.
    func keep(forResponseIn error: any Error) {
        var current: (any Error)? = error
        while let error = current {
            if let carrying = error as? any ResponseCarryingError {
                keep(for: carrying.response)
                return
            }
            current = (error as? CurlewError)?.underlying
        }
    }
}
