internal import Synchronization

/// Waits until a given set of calls has finished — also calls that have not started yet, or not
/// reached their queue (a `DispatchGroup` for requests).
///
/// Take a ticket *before* starting each call (synchronously), pass it in the call's options; the
/// call hands it back when it finishes, whatever the outcome:
///
/// ```swift
/// let tracker = RequestTracker()
/// for page in 1...5 {
///     let ticket = tracker.ticket()
///     Task { try await client.send(PageRequest(page: page)) { $0.queue = "pages"; $0.ticket = ticket } }
/// }
/// await tracker.waitUntilFinished()   // returns after all five, never before
/// ```
///
/// A ticket that is never used counts as finished once it is released (the last reference to it
/// dropped), so a ticket lost on a path that never starts its call cannot keep
/// ``waitUntilFinished()`` waiting for ever; ``Ticket/finish()`` returns it at once.
public final class RequestTracker: Sendable {
    /// One expected call. Finishing it twice counts once.
    public final class Ticket: Sendable {
        private let tracker: RequestTracker
        private let done = Atomic<Bool>(false)

        fileprivate init(tracker: RequestTracker) { self.tracker = tracker }

        /// A ticket nobody holds any more belongs to no call that could still run.
        deinit { finish() }

        /// Marks the call finished (the client does this; call it for a ticket you did not use, or
        /// let the ticket go).
        public func finish() {
            guard !done.exchange(true, ordering: .acquiringAndReleasing) else { return }
            tracker.ticketFinished()
        }
    }

    private struct State {
        var outstanding = 0
        var waiters: [(id: UInt64, continuation: CheckedContinuation<Void, Never>)] = []
        var lastWaiter: UInt64 = 0
    }

    /// Guards the outstanding count and the waiters.
    private let state = Mutex(State())

    /// Creates a tracker with nothing outstanding.
    public init() {}

    /// A ticket for one more call.
    public func ticket() -> Ticket {
        state.withLock { $0.outstanding += 1 }
        return Ticket(tracker: self)
    }

    /// How many tickets are not finished.
    public var outstanding: Int { state.withLock { $0.outstanding } }

    /// Returns once every ticket handed out so far has finished (at once when none is
    /// outstanding, or when the calling task is cancelled).
    public func waitUntilFinished() async {
        let id = state.withLock { state in
            state.lastWaiter += 1
            return state.lastWaiter
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state -> Bool in
                    if state.outstanding == 0 || Task.isCancelled { return true }
                    state.waiters.append((id, continuation))
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                guard let index = state.waiters.firstIndex(where: { $0.id == id }) else { return nil }
                return state.waiters.remove(at: index).continuation
            }
            waiter?.resume()
        }
    }

    private func ticketFinished() {
        let waiters = state.withLock { state -> [CheckedContinuation<Void, Never>] in
            state.outstanding -= 1
            guard state.outstanding == 0 else { return [] }
            defer { state.waiters.removeAll() }
            return state.waiters.map(\.continuation)
        }
        for waiter in waiters { waiter.resume() }
    }
}
