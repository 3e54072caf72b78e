internal import Synchronization
#if canImport(Glibc)
    internal import Glibc
#endif

/// The engines of one `CurlTransport`: each a thread with its own multi handle, connection
/// cache and easy-handle pool, and the rule that picks one per exchange (``EngineBalancer``).
///
/// Engines share nothing but what the request brings (a cookie jar's share handle locks for
/// real; see ``CookieShare``). A connection lives in one engine's cache, so an exchange reuses
/// connections only of the engine it runs on: the balancer keeps a task on its own engine and
/// sends sequential requests to the same engine.
///
/// With one engine there is nothing to choose: ``reserve(for:)`` and ``release(_:)`` return at
/// once, and the transport costs what a single engine costs.
package final class EngineGroup: Sendable {
    /// The engines, in the order of ``EngineLayout/limits``.
    package let engines: [CurlEngine]
    /// How many engines serve one host (``EngineLayout/hostWindowSize``).
    private let hostWindowSize: Int
    /// The choice of engine and the exchanges in flight per engine.
    private let balancer: Mutex<EngineBalancer>
    /// The next engine ``executor`` hands out.
    private let nextExecutor = Atomic<UInt>(0)

    /// Starts one engine thread per entry of `layout`.
    package init(layout: EngineLayout) {
        engines = layout.limits.map { CurlEngine(limits: $0) }
        hostWindowSize = layout.hostWindowSize
        balancer = Mutex(EngineBalancer(engines: layout.engineCount))
    }

    // MARK: Choosing an engine

    /// The engine that carries `request`, counted as busy until ``release(_:)``. Call it for
    /// each hop of a redirect: the next hop's host may live in another window.
    package func reserve(for request: PreparedRequest) -> Int {
        guard engines.count > 1 else { return 0 }
        let window = HostWindow.forHost(of: request.url, size: hostWindowSize, engines: engines.count)
        let current = currentEngine
        return balancer.withLock { $0.choose(current: current, window: window) }
    }

    /// The exchange reserved on `engine` is over (its response, or its head for a stream, was
    /// handed to the caller; or it failed).
    package func release(_ engine: Int) {
        guard engines.count > 1 else { return }
        balancer.withLock { $0.finished(engine) }
    }

    /// The engine whose thread the caller runs on, `nil` off every engine thread.
    private var currentEngine: Int? {
        let thread = UInt(pthread_self())
        for index in engines.indices where engines[index].engineThreadID.load(ordering: .relaxed) == thread {
            return index
        }
        return nil
    }

    // MARK: Executors

    /// The engines' executors in turn: each read returns the next engine, so tasks created
    /// with one read each spread over every engine.
    package var executor: any TaskExecutor {
        guard engines.count > 1 else { return engines[0] }
        let turn = nextExecutor.wrappingAdd(1, ordering: .relaxed).oldValue
        return engines[Int(turn % UInt(engines.count))]
    }

    // MARK: Counters

    /// The counters of every engine, summed.
    package var statistics: EngineGroupStatistics { EngineGroupStatistics(engines: engines.map(\.statistics)) }

    /// Exchanges each engine was chosen for so far (counted when there is more than one engine).
    package var exchangesStarted: [Int] { balancer.withLock { $0.started } }

    // MARK: Shutdown

    /// Ends every exchange still in flight at `deadline` (``EngineClock``), and every exchange
    /// started after it at once, with `.shutdown` and `message` (a drain's bound).
    package func impose(deadline: UInt64, message: String) {
        for engine in engines { engine.impose(deadline: deadline, message: message) }
    }

    /// Shuts every engine down at once (each fails its transfers with `.shutdown`) and returns
    /// once every engine thread has exited.
    package func shutdown() async {
        await withDiscardingTaskGroup { group in
            for engine in engines {
                group.addTask { await engine.shutdown() }
            }
        }
    }

    /// Asks every engine to stop without waiting (from the transport's `deinit`).
    package func requestShutdown() {
        for engine in engines { engine.requestShutdown() }
    }
}
