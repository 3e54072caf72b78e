/// Which engine carries the next transfer: the state of ``EngineGroup``'s choice, kept in its
/// `Mutex`, so choosing an engine and counting the transfer on it happen in one step.
///
/// The rule, in order:
/// 1. **Affinity**: a transfer sent from one of the transport's engine threads (a task that
///    prefers that engine's executor) stays there: no thread hop, and it reuses that engine's
///    connections.
/// 2. **Least busy**: otherwise the engine with the fewest exchanges in flight, so concurrent
///    transfers to one origin spread over every engine and each engine's connections stay a
///    share of the total.
/// 3. **Ties go to the first engine** of the host's window (engine 0 when every engine serves
///    every host), not round robin: sequential requests from one task keep using one engine and
///    so one kept-alive connection, and light load stays on few threads. Under load the counts
///    differ and rule 2 spreads.
///
/// Because the choice and the count happen under one lock, with at most `c` exchanges in flight
/// the least busy engine carries fewer than the average, so an engine chosen by rule 2 never
/// carries more than `c / engines`, rounded up: spreading opens no more connections to an
/// origin than the concurrency needs.
///
/// A pure value, tested without engines.
package struct EngineBalancer: Sendable {
    /// Exchanges in flight per engine: counted from the choice until the caller's `execute`
    /// returns (for a streamed body, until its head arrived).
    private(set) var inFlight: [Int]
    /// Exchanges each engine was chosen for so far (tests and diagnostics).
    private(set) var started: [Int]

    /// A balancer for `engines` idle engines.
    package init(engines: Int) {
        inFlight = Array(repeating: 0, count: engines)
        started = Array(repeating: 0, count: engines)
    }

    /// Chooses the engine for one exchange and counts it there. `current` is the engine whose
    /// thread the caller runs on, if any; `window` the engines allowed for the request's host.
    package mutating func choose(current: Int?, window: HostWindow) -> Int {
        let engines = inFlight.count
        var chosen: Int
        if let current, window.contains(current, engines: engines) {
            chosen = current
        } else {
            chosen = window.start
            var position = window.start
            for _ in 1..<max(1, window.count) {
                position += 1
                if position == engines { position = 0 }
                if inFlight[position] < inFlight[chosen] { chosen = position }
            }
        }
        inFlight[chosen] += 1
        started[chosen] += 1
        return chosen
    }

    /// The exchange chosen for `engine` is over.
    package mutating func finished(_ engine: Int) {
        inFlight[engine] -= 1
    }
}
