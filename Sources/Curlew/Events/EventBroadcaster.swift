internal import Synchronization

/// Hands every published ``ClientEvent`` to every subscriber: each ``subscribe(bufferingNewest:)``
/// gets its own `AsyncStream`, so two readers never split events between them.
///
/// Publishing is cheap when nobody listens (one atomic load), so the request path reports events
/// unconditionally. A subscriber that reads slower than events arrive keeps the newest ones up to
/// its buffer size; a subscription ends when its stream is dropped or its task is cancelled.
package final class EventBroadcaster: Sendable {
    private struct State {
        var subscribers: [UInt64: AsyncStream<ClientEvent>.Continuation] = [:]
        var nextID: UInt64 = 0
    }

    /// Guards the subscriber table; `count` mirrors its size for the lock-free fast path.
    private let state = Mutex(State())
    private let count = Atomic<Int>(0)

    /// Creates a broadcaster with no subscribers.
    package init() {}

    /// Whether anyone listens; publishers may skip building costly events when not.
    package var hasSubscribers: Bool { count.load(ordering: .relaxed) > 0 }

    /// A new stream that receives every event published from now on.
    /// - Parameter limit: How many unread events the stream keeps (the newest). Default: 1024.
    package func subscribe(bufferingNewest limit: Int = 1024) -> AsyncStream<ClientEvent> {
        let (stream, continuation) = AsyncStream.makeStream(of: ClientEvent.self, bufferingPolicy: .bufferingNewest(max(1, limit)))
        let id = state.withLock { state -> UInt64 in
            state.nextID += 1
            state.subscribers[state.nextID] = continuation
            count.store(state.subscribers.count, ordering: .relaxed)
            return state.nextID
        }
        continuation.onTermination = { [weak self] _ in self?.unsubscribe(id) }
        return stream
    }

    /// Delivers an event to every subscriber.
    package func publish(_ event: @autoclosure () -> ClientEvent) {
        guard hasSubscribers else { return }
        let event = event()
        let targets = state.withLock { Array($0.subscribers.values) }
        for continuation in targets { continuation.yield(event) }
    }

    /// Ends every subscriber's stream.
    package func finish() {
        let targets = state.withLock { state -> [AsyncStream<ClientEvent>.Continuation] in
            defer { state.subscribers.removeAll() }
            count.store(0, ordering: .relaxed)
            return Array(state.subscribers.values)
        }
        for continuation in targets { continuation.finish() }
    }

    private func unsubscribe(_ id: UInt64) {
        state.withLock { state in
            state.subscribers[id] = nil
            count.store(state.subscribers.count, ordering: .relaxed)
        }
    }
}
