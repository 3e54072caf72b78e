internal import CCurlShim

/// Closes pooled connections that sat idle for the pool idle timeout, and those the server has
/// closed, while the transport is idle: nothing else would.
///
/// libcurl looks at its cached connections only when a new transfer looks for one (it prunes
/// the cache at most once a second, dropping connections the server closed and those idle for
/// longer than `CURLOPT_MAXAGE_CONN`). A transport that goes quiet after a burst would keep
/// every connection until the next request — minutes, or forever. So while the cache may hold
/// connections and no transfer started in the last second, the engine runs a sweep: a transfer
/// that makes libcurl prune its cache and then fails at once without touching the network (it
/// connects to a Unix socket path that does not exist). Its `CURLOPT_MAXAGE_CONN` is the pool
/// idle timeout, so the prune closes connections idle for that long. Sweeps run every second
/// during the first ten seconds of quiet, then every five, one more once every connection is
/// past the idle timeout, and then stop. The engine asks for one at once when it sees an idle
/// connection's socket become readable (the server closed it: ``sweepSoon()``).
///
/// Engine thread only (the engine owns it and calls it from its loop); not `Sendable`.
package final class ConnectionHousekeeping {
    /// `CURLOPT_PRIVATE` of the sweep transfer: no real transfer has id 0.
    package static let transferID: UInt64 = 0
    private static let second: UInt64 = 1_000_000_000

    private let handle: UnsafeMutableRawPointer?
    private var attached = false
    /// The pool idle timeout in whole seconds (at least 1): `CURLOPT_MAXAGE_CONN` is this less
    /// one, since libcurl closes a connection once its idle time in whole seconds exceeds it.
    package let idleSeconds: Int
    /// The last time a transfer started or ended; `nil` before the first.
    private var lastActivity: UInt64?
    private var lastTransferStart: UInt64 = 0
    private var lastSweep: UInt64 = 0
    /// A sweep was asked for (a connection closed by its server).
    private var sweepWanted = false
    /// Sweeps run so far (tests).
    package private(set) var sweeps = 0

    /// A housekeeper whose sweeps close connections idle for `idleTimeout` (rounded up to whole
    /// seconds, at least one).
    package init(idleTimeout: Duration) {
        idleSeconds = Self.wholeSeconds(idleTimeout)
        let handle = CurlGlobal.initialized ? curl_easy_init() : nil
        self.handle = handle
        guard let handle else { return }
        _ = curlew_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = curlew_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http")
        _ = curlew_easy_setopt_string(handle, CURLOPT_URL, "http://curlew-housekeeping.invalid/")
        _ = curlew_easy_setopt_string(handle, CURLOPT_UNIX_SOCKET_PATH, "/nonexistent/curlew-housekeeping.socket")
        _ = curlew_easy_setopt_string(handle, CURLOPT_PROXY, "")
        _ = curlew_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, 1000)
        _ = curlew_easy_setopt_long(handle, CURLOPT_MAXAGE_CONN, Self.maximumAge(idleSeconds: idleSeconds))
        _ = curlew_easy_setopt_pointer(handle, CURLOPT_PRIVATE, UnsafeMutableRawPointer(bitPattern: UInt(Self.transferID)))
    }

    deinit {
        if let handle { curl_easy_cleanup(handle) }
    }

    /// The timeout in whole seconds, rounded up, at least 1.
    package static func wholeSeconds(_ timeout: Duration) -> Int {
        let (seconds, attoseconds) = timeout.components
        return max(1, Int(seconds) + (attoseconds > 0 ? 1 : 0))
    }

    /// `CURLOPT_MAXAGE_CONN` for an idle timeout of `idleSeconds`: libcurl drops a connection
    /// whose idle time in whole seconds is greater than the option, so one less.
    package static func maximumAge(idleSeconds: Int) -> Int { max(0, idleSeconds - 1) }

    /// A transfer was attached: libcurl prunes on its own while transfers keep starting.
    package func transferStarted(now: UInt64) {
        lastTransferStart = now
        lastActivity = now
    }

    /// A transfer ended: its connection may now sit idle in the cache.
    package func transferEnded(now: UInt64) {
        lastActivity = now
    }

    /// Nanoseconds of quiet (no transfer started or ended), `nil` before the first transfer.
    package func quiet(now: UInt64) -> UInt64? {
        lastActivity.map { now &- $0 }
    }

    /// Asks for a sweep as soon as libcurl would prune again (at most once a second).
    package func sweepSoon() {
        sweepWanted = true
    }

    /// Whether sweeps may still be due (the engine wakes for them).
    package var isWatching: Bool {
        guard let lastActivity else { return false }
        return lastSweep < lastActivity &+ finalSweepDelay
    }

    /// After this much quiet every connection has been idle for longer than the timeout.
    private var finalSweepDelay: UInt64 { UInt64(idleSeconds) * Self.second + Self.second / 2 }

    /// Runs a sweep when one is due. The engine removes the finished sweep transfer from the multi
    /// handle like any other (its id matches no transfer).
    package func tick(multi: UnsafeMutableRawPointer, now: UInt64) {
        guard let handle, let lastActivity else { return }
        let quiet = now &- lastActivity
        guard now &- lastTransferStart >= Self.second, now &- lastSweep >= Self.second else { return }
        let finalSweep = lastActivity &+ finalSweepDelay
        let due: Bool
        if sweepWanted {
            due = true
        } else if lastSweep >= finalSweep {
            due = false  // every connection was past the idle timeout at the last sweep
        } else if now >= finalSweep {
            due = true
        } else {
            let interval = quiet < 10 * Self.second ? Self.second : 5 * Self.second
            due = now &- lastSweep >= interval
        }
        guard due else { return }
        sweepWanted = false
        lastSweep = now
        // Removing a handle libcurl already removed is a no-op; it also ends a sweep still
        // running (it never is: it fails at once).
        if attached { _ = curl_multi_remove_handle(multi, handle) }
        attached = curl_multi_add_handle(multi, handle) == CURLM_OK
        if attached { sweeps += 1 }
    }

    /// Detaches the sweep transfer before the multi handle is cleaned up.
    package func stop(multi: UnsafeMutableRawPointer) {
        guard let handle, attached else { return }
        _ = curl_multi_remove_handle(multi, handle)
        attached = false
    }
}
