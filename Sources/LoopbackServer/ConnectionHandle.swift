import Synchronization

/// A handle to the TCP connection a ``ServerRequest`` arrived on.
///
/// A handler can `await request.connection.closed()` to learn when the client has closed or
/// reset the connection, for example to simulate a server that never answers.
public struct ConnectionHandle: Sendable, Hashable {
    /// The 1-based index of the connection (the same value as ``ServerRequest/connectionID``).
    public let id: Int

    let state: ConnectionState

    init(id: Int, state: ConnectionState) {
        self.id = id
        self.state = state
    }

    /// A handle that is not backed by a socket; it is closed only when ``ConnectionHandle/closeDetached()`` is called.
    ///
    /// Useful to build a ``ServerRequest`` by hand, e.g. to unit-test a ``LoopbackRouter``.
    public static func detached(id: Int = 0) -> ConnectionHandle {
        ConnectionHandle(id: id, state: ConnectionState())
    }

    /// Marks a handle made with ``ConnectionHandle/detached(id:)`` as closed, waking its waiters.
    ///
    /// Calling this on a handle of a real connection closes nothing on the wire but also wakes
    /// the waiters, so only use it with detached handles.
    public func closeDetached() {
        state.markClosed()
    }

    /// `true` once the connection has been closed (by the client, by an error or by shutdown).
    public var isClosed: Bool {
        state.isClosed
    }

    /// Returns once the connection is closed: the client closed or reset it, or the server shut it down.
    ///
    /// Also returns early when the calling task is cancelled (the server cancels a handler's task
    /// when its connection goes away, so this is the same event seen from the other side).
    public func closed() async {
        await state.waitUntilClosed()
    }

    /// Two handles are equal when they refer to the same connection.
    public static func == (lhs: ConnectionHandle, rhs: ConnectionHandle) -> Bool {
        lhs.state === rhs.state
    }

    /// Hashes the identity of the underlying connection.
    public func hash(into hasher: inout Hasher) {
        hasher.combine(ObjectIdentifier(state))
    }
}

/// Close state of one connection plus the tasks waiting for it; every field lives inside `storage`.
final class ConnectionState: Sendable {
    private struct Storage {
        var isClosed = false
        var nextWaiterID = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let storage = Mutex(Storage())

    var isClosed: Bool {
        storage.withLock { $0.isClosed }
    }

    /// Marks the connection closed and resumes every waiter. Idempotent.
    func markClosed() {
        let waiters = storage.withLock { storage -> [CheckedContinuation<Void, Never>] in
            storage.isClosed = true
            let waiting = Array(storage.waiters.values)
            storage.waiters.removeAll()
            return waiting
        }
        for waiter in waiters {
            waiter.resume()
        }
    }

    func waitUntilClosed() async {
        let waiterID = storage.withLock { storage -> Int in
            storage.nextWaiterID += 1
            return storage.nextWaiterID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                // Checked under the lock: if cancellation happened before this point, the flag is
                // already set (it is set before the cancellation handler runs); if it happens after,
                // the handler finds the waiter registered here.
                let resumeNow = storage.withLock { storage -> Bool in
                    if storage.isClosed || Task.isCancelled {
                        return true
                    }
                    storage.waiters[waiterID] = continuation
                    return false
                }
                if resumeNow {
                    continuation.resume()
                }
            }
        } onCancel: {
            let waiter = storage.withLock { $0.waiters.removeValue(forKey: waiterID) }
            waiter?.resume()
        }
    }
}
