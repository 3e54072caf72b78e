internal import CCurlShim

/// Closes pooled connections the server has closed, so they do not linger half-closed
/// (`CLOSE_WAIT`) while the transport is idle.
///
/// libcurl notices a dead idle connection only when a new transfer looks for a connection (it
/// prunes the cache at most once a second, also dropping connections older than
/// `CURLOPT_MAXAGE_CONN`, 118 s). A transport that goes quiet after a burst keeps every
/// connection the server closed in `CLOSE_WAIT` until the next request — minutes, or forever.
/// So while the cache may hold connections and no transfer started in the last second, the
/// engine runs a sweep: a transfer that makes libcurl prune its cache and then fails at once
/// without touching the network (it connects to a Unix socket path that does not exist). Sweeps
/// run every second during the first ten seconds of quiet, then every five, and stop once every
/// cached connection is past libcurl's maximum age.
///
/// Engine thread only (the engine owns it and calls it from its loop); not `Sendable`.
package final class ConnectionHousekeeping {
    /// `CURLOPT_PRIVATE` of the sweep transfer: no real transfer has id 0.
    package static let transferID: UInt64 = 0
    private static let second: UInt64 = 1_000_000_000
    /// libcurl's `CURLOPT_MAXAGE_CONN` default (118 s) and a margin: after that long without a
    /// transfer, one more sweep has dropped every cached connection.
    private static let window: UInt64 = 125 * second

    private let handle: UnsafeMutableRawPointer?
    private var attached = false
    /// The last time a transfer started or ended; `nil` before the first.
    private var lastActivity: UInt64?
    private var lastTransferStart: UInt64 = 0
    private var lastSweep: UInt64 = 0
    /// Sweeps run so far (tests).
    package private(set) var sweeps = 0

    package init() {
        let handle = CurlGlobal.initialized ? curl_easy_init() : nil
        self.handle = handle
        guard let handle else { return }
        _ = curlew_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        _ = curlew_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http")
        _ = curlew_easy_setopt_string(handle, CURLOPT_URL, "http://curlew-housekeeping.invalid/")
        _ = curlew_easy_setopt_string(handle, CURLOPT_UNIX_SOCKET_PATH, "/nonexistent/curlew-housekeeping.socket")
        _ = curlew_easy_setopt_string(handle, CURLOPT_PROXY, "")
        _ = curlew_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, 1000)
        _ = curlew_easy_setopt_pointer(handle, CURLOPT_PRIVATE, UnsafeMutableRawPointer(bitPattern: UInt(Self.transferID)))
    }

    deinit {
        if let handle { curl_easy_cleanup(handle) }
    }

    /// A transfer was attached: libcurl prunes on its own while transfers keep starting.
    package func transferStarted(now: UInt64) {
        lastTransferStart = now
        lastActivity = now
    }

    /// A transfer ended: its connection may now sit idle in the cache.
    package func transferEnded(now: UInt64) {
        lastActivity = now
    }

    /// Runs a sweep when one is due. The engine removes the finished sweep transfer from the multi
    /// handle like any other (its id matches no transfer).
    package func tick(multi: UnsafeMutableRawPointer, now: UInt64) {
        guard let handle, let lastActivity else { return }
        let quiet = now &- lastActivity
        guard quiet < Self.window, now &- lastTransferStart >= Self.second else { return }
        let interval = quiet < 10 * Self.second ? Self.second : 5 * Self.second
        guard now &- lastSweep >= interval else { return }
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
