internal import CCurlShim

/// What the engine does for its connection cache beyond running transfers: sizing it to the load
/// (``ConnectionCacheSizing``) and sweeping out connections the server closed
/// (``ConnectionHousekeeping``).
///
/// Engine thread only, like the multi handle it works on; not `Sendable`.
package final class ConnectionUpkeep {
    private var sizing: ConnectionCacheSizing
    private let housekeeping = ConnectionHousekeeping()

    /// Sizes the cache of `multi` to its floor.
    package init(multi: UnsafeMutableRawPointer, floor: Int) {
        sizing = ConnectionCacheSizing(floor: floor)
        _ = curlew_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, sizing.limit)
    }

    /// Sweeps run so far (tests).
    package var sweeps: Int { housekeeping.sweeps }

    /// A transfer was attached; `inFlight` counts it.
    package func transferAdded(multi: UnsafeMutableRawPointer, inFlight: Int) {
        let now = EngineClock.now()
        housekeeping.transferStarted(now: now)
        if let limit = sizing.update(inFlight: inFlight, now: now) {
            _ = curlew_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, limit)
        }
    }

    /// A transfer ended.
    package func transferEnded() {
        housekeeping.transferEnded(now: EngineClock.now())
    }

    /// Once per engine loop: a sweep when one is due.
    package func tick(multi: UnsafeMutableRawPointer) {
        housekeeping.tick(multi: multi, now: EngineClock.now())
    }

    /// Before the multi handle is cleaned up.
    package func stop(multi: UnsafeMutableRawPointer) {
        housekeeping.stop(multi: multi)
    }
}
