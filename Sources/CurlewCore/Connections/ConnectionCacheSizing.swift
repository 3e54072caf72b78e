/// How many idle connections the engine's cache may keep (`CURLMOPT_MAXCONNECTS`), following
/// the load: at least the configured floor, and four per transfer in flight when that is more —
/// libcurl's own default rule — so a service's fan-out (192 transfers in flight on HTTP/1.1
/// need 192 connections) neither closes connections it is about to need again (churn) nor waits
/// for one (queueing). The limit grows at once and shrinks back only after it was more than
/// needed for ``holdNanoseconds``, so the dip between two waves of requests closes nothing.
///
/// A pure value (the engine applies the limits it returns), tested without I/O.
package struct ConnectionCacheSizing: Sendable, Equatable {
    /// Connections kept per transfer in flight.
    package static let connectionsPerTransfer = 4
    /// How long the limit stays up after the load that needed it (one minute).
    package static let holdNanoseconds: UInt64 = 60_000_000_000

    /// The configured minimum (`CurlTransport.Configuration.maximumCachedConnections`).
    package let floor: Int
    /// The limit in force.
    package private(set) var limit: Int
    /// When the load last needed the limit in force.
    private var neededAt: UInt64 = 0

    package init(floor: Int) {
        self.floor = max(1, floor)
        self.limit = self.floor
    }

    /// The new limit when `inFlight` transfers at `now` change it, `nil` when it stays.
    package mutating func update(inFlight: Int, now: UInt64) -> Int? {
        let wanted = max(floor, inFlight.multipliedReportingOverflow(by: Self.connectionsPerTransfer).partialValue)
        if wanted >= limit {
            neededAt = now
            guard wanted > limit else { return nil }
            limit = wanted
            return limit
        }
        guard now &- neededAt >= Self.holdNanoseconds else { return nil }
        neededAt = now
        limit = wanted
        return limit
    }
}
