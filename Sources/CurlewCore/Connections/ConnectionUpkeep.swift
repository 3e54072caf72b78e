package import CCurlShim
#if canImport(Glibc)
    internal import Glibc
#endif

/// What the engine does for its connection cache beyond running transfers: sizing it to the load
/// (``ConnectionCacheSizing``), closing connections idle for the pool idle timeout or closed by
/// their server (``ConnectionHousekeeping``), counting idle connections (``ConnectionLedger``)
/// and freeing the easy handles kept for reuse once the engine has been quiet that long.
///
/// Engine thread only, like the multi handle it works on; not `Sendable`.
package final class ConnectionUpkeep {
    private static let second: UInt64 = 1_000_000_000

    private var sizing: ConnectionCacheSizing
    private let housekeeping: ConnectionHousekeeping
    private let ledger: ConnectionLedger
    private let pool: EasyHandlePool
    private let statistics: EngineStatistics
    /// The pool idle timeout in nanoseconds (whole seconds).
    private let idleNanoseconds: UInt64
    /// When idle connections were last counted.
    private var lastCount: UInt64 = 0
    /// The ledger's generation at the last count.
    private var countedGeneration = -1
    /// Whether the handle pool was freed since the last transfer.
    private var poolTrimmed = true
    /// Idle connections' sockets the engine polls while no transfer runs: one turning readable
    /// means its server closed it (or sent what an idle connection must not), so a sweep closes
    /// it now rather than leaving it half-closed (`CLOSE_WAIT`).
    package private(set) var watched: [curl_waitfd] = []
    /// Sockets already reported readable (not watched again until they close).
    private var reported: Set<Int32> = []

    /// Sizes the cache of `multi` to its floor.
    package init(
        multi: UnsafeMutableRawPointer, floor: Int, idleTimeout: Duration, pool: EasyHandlePool,
        statistics: EngineStatistics
    ) {
        sizing = ConnectionCacheSizing(floor: floor)
        housekeeping = ConnectionHousekeeping(idleTimeout: idleTimeout)
        idleNanoseconds = UInt64(housekeeping.idleSeconds) * Self.second
        ledger = statistics.connections
        self.pool = pool
        self.statistics = statistics
        _ = curlew_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, sizing.limit)
    }

    /// Sweeps run so far (tests).
    package var sweeps: Int { housekeeping.sweeps }

    /// `CURLOPT_MAXAGE_CONN` for the engine's handles.
    package var maximumAge: Int { ConnectionHousekeeping.maximumAge(idleSeconds: housekeeping.idleSeconds) }

    /// A transfer was attached; `inFlight` counts it.
    package func transferAdded(multi: UnsafeMutableRawPointer, inFlight: Int) {
        let now = EngineClock.now()
        housekeeping.transferStarted(now: now)
        poolTrimmed = false
        if let limit = sizing.update(inFlight: inFlight, now: now) {
            _ = curlew_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, limit)
        }
    }

    /// A transfer ended.
    package func transferEnded() {
        housekeeping.transferEnded(now: EngineClock.now())
    }

    /// Once per engine loop: about once a second, counts idle connections, lets the cache limit
    /// follow the load down, and chooses the sockets to watch; a sweep when one is due; the
    /// handle pool freed after the idle timeout of quiet.
    package func tick(multi: UnsafeMutableRawPointer, now: UInt64, inFlight: Int) {
        // Counted again at once when sockets opened or closed: the watched list must never hold
        // a socket libcurl closed (polling it would return at once, every turn).
        let generation = ledger.generation
        if now &- lastCount >= Self.second || (generation != countedGeneration && !watched.isEmpty) {
            lastCount = now
            countedGeneration = generation
            count(multi: multi, now: now, inFlight: inFlight)
        }
        housekeeping.tick(multi: multi, now: now)
        if !poolTrimmed, inFlight == 0, let quiet = housekeeping.quiet(now: now), quiet >= idleNanoseconds {
            pool.trim()
            poolTrimmed = true
            // glibc keeps freed memory in its arenas; after a burst's handles, buffers and
            // connections are gone, hand what is free back to the system.
            #if os(Linux)
                _ = malloc_trim(0)
            #endif
        }
    }

    /// Idle connections: every open socket while no transfer runs; under load, an estimate —
    /// the open sockets less one per transfer in flight (an HTTP/1.1 transfer holds one
    /// connection; HTTP/2 transfers share theirs, so the estimate is low then).
    private func count(multi: UnsafeMutableRawPointer, now: UInt64, inFlight: Int) {
        if let limit = sizing.update(inFlight: inFlight, now: now) {
            _ = curlew_multi_setopt_long(multi, CURLMOPT_MAXCONNECTS, limit)
        }
        watched.removeAll(keepingCapacity: true)
        // Only while nothing runs is every open socket idle and worth watching: under load
        // libcurl looks at its cache on every new transfer, and polling hundreds of idle sockets
        // each turn would cost more than it saves.
        guard inFlight == 0 else {
            statistics.setIdleConnections(max(0, ledger.openSockets - inFlight))
            return
        }
        let idle = ledger.snapshot
        statistics.setIdleConnections(idle.count)
        reported.formIntersection(idle)
        for socket in idle where !reported.contains(socket) {
            watched.append(curl_waitfd(fd: socket, events: Int16(POLLIN), revents: 0))
        }
    }

    /// Lends ``watched`` to `curl_multi_poll`, which writes each entry's `revents`.
    package func withWatched(_ body: (UnsafeMutablePointer<curl_waitfd>, UInt32) -> Void) {
        let count = UInt32(watched.count)
        watched.withUnsafeMutableBufferPointer { buffer in
            if let base = buffer.baseAddress { body(base, count) }
        }
    }

    /// After `curl_multi_poll` with ``watched``, which counted `events` sockets with something
    /// to report: a readable idle socket asks for a sweep.
    package func afterPoll(events: Int32) {
        var readable = false
        for index in watched.indices where watched[index].revents != 0 {
            reported.insert(watched[index].fd)
            statistics.halfClosedSeen()
            readable = true
        }
        // libcurl hands back only POLLIN, POLLOUT and POLLPRI of the sockets it was lent. A socket
        // closed under libcurl (POLLNVAL) or with only an error or hang-up pending makes poll(2)
        // return at once, every turn, with nothing handed back: the engine would spin. Counted
        // but not handed back, such sockets are found with poll(2) itself and not watched again.
        if !readable, events > 0 { readable = reportUnmapped() }
        guard readable else {
            return
        }
        watched.removeAll { reported.contains($0.fd) }
        housekeeping.sweepSoon()
    }

    /// Reports every watched socket with any event, the ones libcurl does not hand back
    /// included; whether there was one.
    private func reportUnmapped() -> Bool {
        let sockets = Self.socketsWithEvents(watched.map(\.fd))
        reported.formUnion(sockets)
        return !sockets.isEmpty
    }

    /// The descriptors of `sockets` for which poll(2), without waiting, reports any event —
    /// readable, an error, a hang-up, or not open at all (`POLLNVAL`).
    package static func socketsWithEvents(_ sockets: [Int32]) -> [Int32] {
        var entries = sockets.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
        guard poll(&entries, nfds_t(entries.count), 0) > 0 else { return [] }
        return entries.filter { $0.revents != 0 }.map(\.fd)
    }

    /// Before the multi handle is cleaned up.
    package func stop(multi: UnsafeMutableRawPointer) {
        housekeeping.stop(multi: multi)
    }
}
