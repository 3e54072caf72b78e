internal import Foundation

/// How a transport's engine count and connection limits (`CurlTransport.Configuration`) become
/// engines: how many, and the limits of each one's multi handle, chosen so the configured limits
/// hold for the transport as a whole.
///
/// libcurl enforces `CURLMOPT_MAX_TOTAL_CONNECTIONS` and `CURLMOPT_MAX_HOST_CONNECTIONS` per
/// multi handle, and each engine has its own, so a transport-wide cap is divided exactly: engine
/// `i` gets `cap / count`, plus one while `i < cap % count`, and the shares add up to the cap.
/// (Rounding every share up would let two engines with a per-host cap of 1 open two connections
/// to the host.) A share of zero is impossible to express — libcurl reads 0 as "no limit" — so:
///
/// - **Total cap below the engine count**: the transport runs only as many engines as the cap,
///   each allowed one connection. A transport capped to a few connections gains nothing from
///   more threads than connections.
/// - **Per-host cap below the engine count**: every engine allows one connection per host, and
///   each host is served by a ``HostWindow`` of only `cap` engines, chosen by a hash of its host
///   name. Other hosts use other windows, so a transport calling many hosts still spreads over
///   every engine, while no host ever has more than `cap` connections.
///
/// With a per-host cap of at least the engine count every engine serves every host, so the
/// connections to one origin spread over all engines. The price of dividing: an engine may queue
/// a transfer for its share while another engine's share of that host is idle; the balancer
/// (``EngineBalancer``) sends each transfer to the least busy engine, which keeps that rare.
///
/// The cache floor (`maximumCachedConnections`, a minimum, not a cap) is divided rounding up, so
/// the engines together keep at least as many idle connections as configured.
///
/// A pure value computed once per transport, tested without engines.
package struct EngineLayout: Sendable, Equatable {
    /// Each engine's multi-handle limits, one entry per engine.
    package let limits: [CurlEngine.Limits]
    /// How many engines serve any one host: the engine count, or the per-host cap when that is
    /// smaller.
    package let hostWindowSize: Int

    /// The layout for `requested` engines (`nil`: one per processor) sharing the transport-wide
    /// `limits`, on a machine with `processors` active processors.
    ///
    /// `requested` must be at least 1 when set (checked by the transport). Caps of zero or less
    /// mean no limit, as libcurl reads 0. Plain values in, so the layout does not depend on the
    /// public configuration type.
    package init(engineCount requested: Int?, limits transport: CurlEngine.Limits, processors: Int) {
        let wanted = requested ?? max(1, processors)
        let totalCap = transport.maximumTotalConnections.flatMap { $0 > 0 ? $0 : nil }
        let hostCap = transport.maximumConnectionsPerHost.flatMap { $0 > 0 ? $0 : nil }
        let count = max(1, min(wanted, totalCap ?? wanted))
        let cacheFloor = max(1, (transport.maximumCachedConnections + count - 1) / count)
        limits = (0..<count).map { index in
            CurlEngine.Limits(
                maximumCachedConnections: cacheFloor,
                maximumConnectionsPerHost: hostCap.map { Self.share(of: $0, engine: index, count: count) },
                maximumTotalConnections: totalCap.map { Self.share(of: $0, engine: index, count: count) },
                idleConnectionTimeout: transport.idleConnectionTimeout, connectRetry: transport.connectRetry)
        }
        hostWindowSize = min(count, hostCap ?? count)
    }

    /// How many engines the transport runs.
    package var engineCount: Int { limits.count }

    /// Engine `engine`'s share of `cap` split over `count` engines: the shares add up to `cap`,
    /// and each is at least 1 (when `cap` is below `count`, engines serve hosts in windows of
    /// `cap` engines with one connection each).
    package static func share(of cap: Int, engine: Int, count: Int) -> Int {
        guard cap >= count else { return 1 }
        return cap / count + (engine < cap % count ? 1 : 0)
    }

    /// The number of engines that fits a machine: one per active processor, at least one.
    package static var defaultProcessors: Int {
        ProcessInfo.processInfo.activeProcessorCount
    }
}
