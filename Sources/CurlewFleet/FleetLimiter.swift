public import Curlew
internal import Foundation
public import Logging
public import Metrics
public import ServiceLifecycle
internal import Synchronization

/// Named queue limits shared by a fleet: "at most 8 concurrent calls to the partner API across
/// all instances".
///
/// Each instance leases a batch of slots from the ``FleetStore`` and spends them locally: the
/// limiter sets the ``/Curlew/QueueActor``'s own limit for the queue to the slots in hand (and holds the
/// queue while it has none), so a call that finds a slot pays nothing more than an ordinary
/// queued call — no round trip on the request path. The limiter renews the lease while calls run
/// or wait, asks for more when callers wait, gives slots back once they have been idle for
/// ``Configuration/idleRelease``, and leases run
/// out after ``Configuration/leaseTimeToLive``: an instance that dies holding slots gives them back
/// by then.
///
/// When the store does not answer within ``Configuration/leaseTimeout``, the instance falls back
/// to a local share of the limit (limit ÷ the last known instance count) and says so
/// (``Status/isFallback``, the `curlew_fleet_fail_open` metric with `what=limit`); calls go on.
/// The request that did not answer is not repeated while the store is still working on it (for
/// up to ``Configuration/leaseTimeToLive``), so a slow store is not sent more and more of them.
///
/// Metrics, each with the dimension `queue` (swift-metrics, ``Configuration/metricsFactory``):
/// `curlew_fleet_limit_slots` (gauge: slots this instance may use now),
/// `curlew_fleet_limit_instances` (gauge: instances sharing the limit, as last known),
/// `curlew_fleet_limit_fallback` (gauge: 1 while the local share is in force, else 0),
/// `curlew_fleet_limit_fallbacks_total` (counter: times the instance fell back),
/// `curlew_fleet_limit_leases_total` (counter: lease requests the store answered) and
/// `curlew_fleet_fail_open` with `what=limit` (counter: lease requests that went unanswered).
///
/// ```swift
/// let queues = QueueActor()
/// let limiter = try FleetLimiter(queues: queues, store: store, limits: ["partner": 8])
/// let client = APIClient(configuration: configuration, queues: queues)
/// // Run `limiter` in the ServiceGroup; calls with `options.queue = "partner"` share the 8.
/// ```
///
/// The limiter holds its queues from the moment it is created until its first lease, so no call
/// runs on a slot the fleet has not granted: run it (in the `ServiceGroup`) as the service starts,
/// or calls to its queues wait.
///
/// The limiter owns the queue's limit and its hold: do not call ``/Curlew/QueueActor/setLimit(_:for:)``,
/// ``/Curlew/QueueActor/hold(_:)`` or ``/Curlew/QueueActor/resume(_:)`` for a fleet-limited queue yourself.
///
/// `Sendable` through one `Mutex` guarding the per-queue ``Status``; everything else is immutable.
public final class FleetLimiter: Service, Sendable {
    /// Timing of the leases.
    public struct Configuration: Sendable {
        /// How long a lease lasts without renewal; zero or less is refused by
        /// ``FleetLimiter/init(queues:store:limits:configuration:)``. Default: 5 s.
        public var leaseTimeToLive: Duration = .seconds(5)
        /// How often the limiter looks at the queues' demand; zero or less is refused (the
        /// limiter would spin). Default: 5 ms.
        public var checkInterval: Duration = .milliseconds(5)
        /// The shortest pause between two lease requests for one queue while its demand is not
        /// met; a negative one is refused. Default: 25 ms.
        public var retryInterval: Duration = .milliseconds(25)
        /// How long this instance keeps slots its calls no longer use: a call that comes within
        /// it finds its slot in hand, with no lease round trip, and the slots go back to the fleet
        /// once the demand has stayed lower for this long; a negative one is refused.
        /// Default: 100 ms.
        public var idleRelease: Duration = .milliseconds(100)
        /// How long a lease request may take before the instance falls back to its local share;
        /// zero or less is refused (every request would fall back). Default: 250 ms.
        public var leaseTimeout: Duration = .milliseconds(250)
        /// Instances assumed before the store has told how many there are; fewer than 1 is
        /// refused. Default: 1.
        public var assumedInstances = 1
        /// This instance's name in the leases (unique per instance); a blank one is refused (the
        /// instances that share it would share one lease). Default: a random UUID.
        public var instance = UUID().uuidString
        /// Where fallbacks are logged.
        public var logger = Logger(label: "curlew.fleet.limits")
        /// Where the limiter's metrics go (see ``FleetLimiter``); `nil` (the default): the
        /// process-wide `MetricsSystem`, which records nothing until the application bootstraps it.
        public var metricsFactory: (any MetricsFactory)?

        /// The defaults.
        public init() {}
    }

    /// One queue's view of its fleet limit.
    public struct Status: Sendable, Hashable {
        /// The fleet-wide limit.
        public var capacity: Int
        /// Slots this instance may use now (its local limit; 0 while it holds the queue).
        public var slots: Int
        /// Instances sharing the limit, as the store last said.
        public var instances: Int
        /// Whether the store is unreachable and the local share is in force.
        public var isFallback: Bool
        /// Times the instance fell back to its local share.
        public var fallbacks: Int
        /// Lease requests answered.
        public var leases: Int
    }

    /// The queues the limits apply to.
    public let queues: QueueActor
    /// The fleet's store.
    public let store: any FleetStore
    /// Fleet-wide limits by queue name.
    public let limits: [String: Int]
    /// Timing of the leases.
    public let configuration: Configuration
    private let state: Mutex<[String: Status]>
    private let metrics: [String: LimitMetrics]

    /// A limiter for `limits` (queue name → fleet-wide concurrency) on `queues`.
    /// - Throws: `CurlewError` with `CurlewError.Code.invalidConnectionSettings` (stage
    ///   `configuration`), naming the setting and its value, for a limit below 1 or on a blank
    ///   queue name (no call can use it), and for a ``Configuration`` setting it refuses (a
    ///   ``Configuration/leaseTimeToLive``, ``Configuration/checkInterval`` or
    ///   ``Configuration/leaseTimeout`` of zero or less, a negative ``Configuration/retryInterval``
    ///   or ``Configuration/idleRelease``, ``Configuration/assumedInstances`` below 1, a blank
    ///   ``Configuration/instance``). Nothing is leased then.
    public init(queues: QueueActor, store: any FleetStore, limits: [String: Int], configuration: Configuration = Configuration()) throws(CurlewError) {
        try Self.check(limits: limits, configuration: configuration)
        self.queues = queues
        self.store = store
        self.limits = limits
        self.configuration = configuration
        let factory = configuration.metricsFactory ?? MetricsSystem.factory
        self.metrics = Dictionary(uniqueKeysWithValues: limits.keys.map { ($0, LimitMetrics(queue: $0, factory: factory)) })
        self.state = Mutex(
            self.limits.mapValues {
                Status(capacity: $0, slots: 0, instances: configuration.assumedInstances, isFallback: false, fallbacks: 0, leases: 0)
            })
        // Held from here, not from `run()`: a call that reached a queue before the limiter ran
        // would run on a slot the fleet never granted, unseen by the other instances.
        for name in limits.keys { queues.holdFromOwner(name) }
    }

    /// Refuses a limit or setting the limiter cannot honour (it used to make a limit of 0 one,
    /// and accept a limit no call can use).
    private static func check(limits: [String: Int], configuration: Configuration) throws(CurlewError) {
        func refuse(_ message: String) throws(CurlewError) {
            var error = CurlewError(code: .invalidConnectionSettings, message: "FleetLimiter: " + message)
            error.stage = .configuration
            throw error
        }
        for (name, limit) in limits.sorted(by: { $0.key < $1.key }) {
            if name.allSatisfy(\.isWhitespace) {
                try refuse("the limit \(limit) names the queue \"\(name)\", which is empty: no call can use it")
            }
            if limit < 1 { try refuse("the limit of the queue \"\(name)\" must be at least 1, not \(limit)") }
        }
        for (name, value) in [
            ("leaseTimeToLive", configuration.leaseTimeToLive), ("checkInterval", configuration.checkInterval),
            ("leaseTimeout", configuration.leaseTimeout),
        ] where value <= .zero {
            try refuse("\(name) must be longer than zero, not \(value)")
        }
        for (name, value) in [("retryInterval", configuration.retryInterval), ("idleRelease", configuration.idleRelease)] where value < .zero {
            try refuse("\(name) must be zero or longer, not \(value)")
        }
        if configuration.assumedInstances < 1 { try refuse("assumedInstances must be at least 1, not \(configuration.assumedInstances)") }
        if configuration.instance.allSatisfy(\.isWhitespace) {
            try refuse("instance must name this instance, not \"\(configuration.instance)\"")
        }
    }

    /// The view of one queue's fleet limit, `nil` for a queue without one.
    public func status(of queue: String) -> Status? {
        state.withLock { $0[queue] }
    }

    /// Holds the fleet-limited queues until their first lease, then keeps the leases until
    /// graceful shutdown or cancellation, and finally gives every slot back.
    public func run() async throws {
        for name in limits.keys { await queues.hold(name) }
        await cancelWhenGracefulShutdown {
            await withDiscardingTaskGroup { group in
                for (name, capacity) in self.limits {
                    group.addTask { await self.keep(name, capacity: capacity) }
                }
            }
        }
        // Give the slots back: the other instances need not wait for the leases to run out.
        for (name, capacity) in limits {
            _ = await withSoftTimeout(configuration.leaseTimeout) { [store, configuration] in
                try await store.lease(name, capacity: capacity, holder: configuration.instance, wanted: 0, inUse: 0, ttl: .milliseconds(1))
            }
            await queues.setLimit(max(1, capacity / max(1, self.status(of: name)?.instances ?? 1)), for: name)
            await queues.resume(name)
        }
    }

    private func keep(_ name: String, capacity: Int) async {
        var localLimit = 0
        var lastLease = ContinuousClock.now - configuration.leaseTimeToLive
        var lastShortfall: ContinuousClock.Instant?
        let renewEvery = configuration.leaseTimeToLive / 3
        var first = true
        // The demand asked for: it rises with the calls at once, and falls only after the lower
        // demand has lasted `idleRelease` (a caller that sends one call after another would
        // otherwise find its queue held between two calls and wait for a lease each time).
        var wanted = 0
        // When the demand last reached `wanted`.
        var wantedSince = ContinuousClock.now
        // A lease request that outlived its timeout goes on unobserved; until it ends (or a
        // lease's lifetime has passed, when it is taken for lost) no other goes out, so a slow
        // store is not sent a new request every retry interval on top of the ones it is still
        // working on.
        let requests = LeaseRequests()
        var abandonedAt: ContinuousClock.Instant?
        while !Task.isCancelled {
            let (running, waiting, _) = await queues.status(of: name)
            let demand = min(capacity, running + waiting)
            let now = ContinuousClock.now
            if demand >= wanted || now - wantedSince >= configuration.idleRelease {
                wanted = demand
                wantedSince = now
            }
            let due = now - lastLease >= renewEvery || first
            let changed = wanted != localLimit
            let retryAllowed = lastShortfall.map { now - $0 >= configuration.retryInterval } ?? true
            let previousRunning = abandonedAt.map { requests.areRunning && now - $0 < configuration.leaseTimeToLive } ?? false
            if (due || (changed && retryAllowed)) && !previousRunning {
                first = false
                let inUse = max(running, localLimit)
                let store = store
                let holder = configuration.instance
                let ttl = configuration.leaseTimeToLive
                let asked = wanted
                requests.begin()
                let outcome = await withSoftTimeout(configuration.leaseTimeout) {
                    defer { requests.end() }
                    return try await store.lease(name, capacity: capacity, holder: holder, wanted: asked, inUse: inUse, ttl: ttl)
                }
                lastLease = ContinuousClock.now
                if case .timedOut = outcome { abandonedAt = lastLease } else { abandonedAt = nil }
                switch outcome {
                case .answered(let lease):
                    localLimit = lease.granted
                    lastShortfall = lease.granted < wanted ? ContinuousClock.now : nil
                    await apply(name, slots: lease.granted)
                    state.withLock { states in
                        states[name]?.slots = lease.granted
                        states[name]?.instances = max(1, lease.holders)
                        states[name]?.isFallback = false
                        states[name]?.leases += 1
                    }
                    metrics[name]?.answered(slots: lease.granted, instances: max(1, lease.holders))
                case .failed, .timedOut:
                    let (share, fellBack) = state.withLock { states -> (Int, Bool) in
                        let instances = states[name]?.instances ?? 1
                        let share = max(1, capacity / max(1, instances))
                        let fellBack = states[name]?.isFallback == false
                        if fellBack { states[name]?.fallbacks += 1 }
                        states[name]?.isFallback = true
                        states[name]?.slots = share
                        return (share, fellBack)
                    }
                    if localLimit != share {
                        configuration.logger.warning("fleet limit \(name): store unreachable, using a local share of \(share)")
                    }
                    metrics[name]?.unanswered(share: share, fellBack: fellBack)
                    localLimit = share
                    lastShortfall = ContinuousClock.now
                    await apply(name, slots: share)
                }
            }
            try? await CallDeadline.sleep(for: configuration.checkInterval)
        }
    }

    /// Makes the local queue run at most `slots` calls (held at 0).
    private func apply(_ name: String, slots: Int) async {
        if slots <= 0 {
            await queues.hold(name)
        } else {
            await queues.setLimit(slots, for: name)
            if await queues.status(of: name).isHeld { await queues.resume(name) }
        }
    }
}

/// How many of one queue's lease requests are running, the ones that outlived their timeout
/// included. `Sendable` through its `Atomic`.
final class LeaseRequests: Sendable {
    private let running = Atomic<Int>(0)

    /// A request goes out.
    func begin() { running.add(1, ordering: .relaxed) }
    /// A request ended, answered or not.
    func end() { running.subtract(1, ordering: .relaxed) }
    /// Whether one is still running.
    var areRunning: Bool { running.load(ordering: .relaxed) > 0 }
}

/// The swift-metrics instruments of one fleet-limited queue.
struct LimitMetrics: Sendable {
    let slots: Gauge
    let instances: Gauge
    let fallback: Gauge
    let fallbacks: Counter
    let leases: Counter
    let failOpen: Counter

    init(queue: String, factory: any MetricsFactory) {
        let dimensions = [("queue", queue)]
        slots = Gauge(label: "curlew_fleet_limit_slots", dimensions: dimensions, factory: factory)
        instances = Gauge(label: "curlew_fleet_limit_instances", dimensions: dimensions, factory: factory)
        fallback = Gauge(label: "curlew_fleet_limit_fallback", dimensions: dimensions, factory: factory)
        fallbacks = Counter(label: "curlew_fleet_limit_fallbacks_total", dimensions: dimensions, factory: factory)
        leases = Counter(label: "curlew_fleet_limit_leases_total", dimensions: dimensions, factory: factory)
        failOpen = Counter(label: "curlew_fleet_fail_open", dimensions: [("what", "limit"), ("queue", queue)], factory: factory)
    }

    /// The store answered a lease request.
    func answered(slots granted: Int, instances holders: Int) {
        leases.increment()
        slots.record(granted)
        instances.record(holders)
        fallback.record(0)
    }

    /// A lease request went unanswered: the local share is in force.
    func unanswered(share: Int, fellBack: Bool) {
        failOpen.increment()
        if fellBack { fallbacks.increment() }
        slots.record(share)
        fallback.record(1)
    }
}
