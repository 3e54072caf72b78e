package import CCurlShim
internal import Synchronization
#if canImport(Glibc)
    internal import Glibc
#endif

/// The sockets one engine's connections hold, learned from libcurl's open- and close-socket
/// callbacks (`CURLOPT_OPENSOCKETFUNCTION`, `CURLOPT_CLOSESOCKETFUNCTION`), which every easy
/// handle of the engine carries (``PooledEasyHandle``).
///
/// libcurl has no call that tells how many connections its cache holds. A connection keeps the
/// close callback of the handle that opened it, so every socket an engine's transfers open is
/// reported closed here too — by a later transfer's pruning, by a housekeeping sweep, or by
/// `curl_multi_cleanup` — whichever handle happens to close it. The engine compares the open
/// sockets with those its transfers use to count idle connections, and watches the idle ones to
/// learn when a server closes one (``ConnectionUpkeep``).
///
/// Thread-safety: the callbacks run on the engine thread (inside libcurl's multi calls), but a
/// handle could in principle be cleaned up elsewhere, so the set of sockets is guarded by its
/// `Mutex`; the counters are atomics. `Sendable` without `@unchecked`.
package final class ConnectionLedger: Sendable {
    /// Sockets open now.
    private let sockets = Mutex(Set<Int32>())
    private let openCount = Atomic<Int>(0)
    private let opened = Atomic<Int>(0)
    private let changes = Atomic<Int>(0)

    package init() {}

    /// Sockets open now (connections, and attempts still connecting).
    package var openSockets: Int { openCount.load(ordering: .relaxed) }
    /// Sockets opened so far.
    package var socketsOpened: Int { opened.load(ordering: .relaxed) }

    /// Counts every open and close: a changed value means the set of sockets changed.
    package var generation: Int { changes.load(ordering: .relaxed) }

    /// A copy of the open sockets.
    package var snapshot: Set<Int32> { sockets.withLock { $0 } }

    fileprivate func didOpen(_ socket: Int32) {
        sockets.withLock { _ = $0.insert(socket) }
        openCount.wrappingAdd(1, ordering: .relaxed)
        opened.wrappingAdd(1, ordering: .relaxed)
        changes.wrappingAdd(1, ordering: .relaxed)
    }

    fileprivate func willClose(_ socket: Int32) {
        let known = sockets.withLock { $0.remove(socket) != nil }
        if known { openCount.wrappingSubtract(1, ordering: .relaxed) }
        changes.wrappingAdd(1, ordering: .relaxed)
    }

    /// Points `handle`'s socket callbacks at this ledger. The ledger must outlive every
    /// connection the handle opens (the engine keeps it until its multi handle is cleaned up).
    package func install(on handle: UnsafeMutableRawPointer) -> CURLcode {
        curlew_easy_setopt_socket_callbacks(
            handle, SocketCallbacks.open, SocketCallbacks.close, Unmanaged.passUnretained(self).toOpaque())
    }
}

/// The ledger's socket callbacks (static members: see ``CurlCallbacks``).
private enum SocketCallbacks {
    /// Opens the socket libcurl asks for (as libcurl's own `socket()` call would) and records it.
    static let open: curlew_opensocket_callback = { user, _, address in
        let socket = Glibc.socket(address.pointee.family, address.pointee.socktype, address.pointee.protocol)
        guard socket >= 0 else { return CURL_SOCKET_BAD }
        if let user { Unmanaged<ConnectionLedger>.fromOpaque(user).takeUnretainedValue().didOpen(socket) }
        return socket
    }

    /// Forgets and closes a socket libcurl is done with; 0 tells libcurl it was closed.
    static let close: curlew_closesocket_callback = { user, socket in
        if let user { Unmanaged<ConnectionLedger>.fromOpaque(user).takeUnretainedValue().willClose(socket) }
        return Glibc.close(socket)
    }
}
