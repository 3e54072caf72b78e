public import Curlew
public import ServiceLifecycle
public import Foundation
public import Logging
internal import Metrics
internal import Synchronization
public import Tracing

/// A two-tier ``/Curlew/CacheStorage`` for a ``/Curlew/ResponseCache`` running on several instances: the
/// instance's own storage (memory or disk) first, a ``FleetStore`` shared by the fleet second.
///
/// ```swift
/// let fleet = PostgresFleetStore(configuration: try .init(url: databaseURL))
/// let storage = try FleetCacheStorage(local: MemoryCacheStorage(), store: fleet)
/// let cache = ResponseCache(storage: storage, credentials: .anonymous)
/// ```
///
/// - A lookup that misses the first tier asks the store under ``Configuration/softTimeout``;
///   no answer in time is a miss, and a hit is copied into the first tier.
/// - Writes reach the first tier at once and the store later, in order, off every caller's
///   path; while the store is down they wait (at most ``Configuration/maximumPendingWrites``)
///   and are replayed when it answers again. A replayed write never brings back an older
///   answer: the store ignores it when its entry was requested before the stored one, or before
///   an invalidation that covers it (``FleetStore/write(_:)``).
/// - After ``Configuration/failureThreshold`` failures in a row a circuit breaker stops asking
///   the store for ``Configuration/breakDuration``, then lets one call through as a probe.
/// - ``/Curlew/ResponseCache/invalidate(_:)`` goes to the store, which tells every instance: each one
///   evicts the matching entries from its first tier.
/// - A `GET` that misses both tiers takes a lock on its key for the fleet
///   (``Configuration/singleFlight``): the instance that gets it reads the store once more (the
///   last holder's answer lands there before its lock is given back) and then fetches; the others
///   wait for the stored answer, up to a timeout after which they fetch themselves.
///
/// Keys are the cache's own (credential scope and `Vary` variant included), so a second-tier hit
/// is exactly what the first tier would have served. Every decision that goes on without the
/// store is counted (``statistics``, and the `curlew_fleet_fail_open` metric).
///
/// `Sendable` through one `Mutex` guarding its `State`; everything else is immutable.
public final class FleetCacheStorage: CacheStorage, Sendable {
    /// How the tiers work together.
    public struct Configuration: Sendable {
        /// How long a lookup waits for the store before going on as a miss — in all: the read,
        /// and on a miss the single-flight lock and the read after it, share it; zero or less is
        /// refused by ``FleetCacheStorage/init(local:store:configuration:)`` (every lookup would
        /// miss). Default: 5 ms.
        public var softTimeout: Duration = .milliseconds(5)
        /// How long a background write or invalidation may take before it counts as failed and
        /// is retried; zero or less is refused. Default: 2 s.
        public var writeTimeout: Duration = .seconds(2)
        /// Failures in a row (errors or timeouts) that open the circuit breaker; fewer than 1 is
        /// refused. Default: 3.
        public var failureThreshold = 3
        /// How long an open breaker keeps the store out before one probe; a negative duration is
        /// refused. Default: 1 s.
        public var breakDuration: Duration = .seconds(1)
        /// Writes and invalidations kept for the store while it is down; older writes beyond it
        /// are dropped (counted); fewer than 1 is refused (every write would be dropped).
        /// Default: 1,000.
        public var maximumPendingWrites = 1_000
        /// Fleet-wide single-flight for `GET` misses, or `nil` for none.
        public var singleFlight: SingleFlight? = SingleFlight()
        /// This instance's name in locks (unique per instance); a blank one is refused (the
        /// instances that share it would take each other's locks). Default: a random UUID.
        public var instance = UUID().uuidString
        /// Where fail-open decisions are logged (debug level, keys without their scope).
        public var logger = Logger(label: "curlew.fleet")
        /// Where the spans of store reads and single-flight locks go (`fleet read`, `fleet lock`,
        /// each with its `curlew.fleet.outcome`); `nil` (the default): the process-wide tracer,
        /// which records nothing until the application bootstraps one.
        public var tracer: (any Tracer)?

        /// The defaults.
        public init() {}
    }

    /// How a fleet fetches a missing key once.
    public struct SingleFlight: Sendable {
        /// How long the fetching instance's lock lasts at most (it is given back when the answer
        /// is stored, or at once when the call ends with nothing to store; then every waiting
        /// caller fetches for itself); zero or less is refused. Default: 10 s.
        public var lockTimeToLive: Duration = .seconds(10)
        /// How long the other callers wait for the stored answer before fetching themselves; a
        /// negative duration is refused. Default: 2 s.
        public var wait: Duration = .seconds(2)
        /// How often a waiting instance looks for the answer in the store; zero or less is
        /// refused (the waiters would spin). Default: 10 ms.
        public var pollInterval: Duration = .milliseconds(10)

        /// The defaults.
        public init() {}
    }

    /// Counters since the storage was created.
    public struct Statistics: Sendable, Hashable {
        /// Lookups the first tier answered.
        public var firstTierHits = 0
        /// Lookups the store answered (after a first-tier miss).
        public var secondTierHits = 0
        /// Lookups neither tier answered.
        public var misses = 0
        /// Lookups that went on as a miss because the store failed, did not answer within the soft
        /// timeout, or the breaker was open.
        public var failOpenReads = 0
        /// Times the circuit breaker opened.
        public var breakerOpenings = 0
        /// Writes and invalidations that reached the store.
        public var storeWrites = 0
        /// Writes and invalidations that failed and were kept for a retry.
        public var storeWriteFailures = 0
        /// Writes dropped because too many were pending, or because they waited longer than the
        /// store remembers invalidations (``FleetInvalidation/memory``).
        public var droppedWrites = 0
        /// Writes the store refused for their content (``FleetStoreError/isRefusal``: a key too
        /// long to index); their answers stay in the first tier only.
        public var refusedWrites = 0
        /// Invalidations heard from the backplane (any instance's, this one's included).
        public var invalidationsReceived = 0
        /// Misses this instance fetched holding the fleet lock.
        public var singleFlightLeads = 0
        /// Misses answered by waiting for another caller's fetch.
        public var singleFlightFollows = 0
        /// Waits that ran out, the caller fetching itself.
        public var singleFlightTimeouts = 0

        /// All zero.
        public init() {}
    }

    /// The instance's own tier.
    public let local: any CacheStorage
    /// The fleet's tier.
    public let store: any FleetStore
    /// How the tiers work together.
    public let configuration: Configuration

    private let state = Mutex(State())
    private let metrics = FleetMetrics()

    /// Two tiers: `local` first, `store` second. Starts listening for invalidations.
    /// - Throws: `CurlewError` with `CurlewError.Code.invalidConnectionSettings` (stage
    ///   `configuration`), naming the setting and its value, for a ``Configuration`` setting it
    ///   refuses (see each one); nothing is read or written then.
    public init(local: any CacheStorage, store: any FleetStore, configuration: Configuration = Configuration()) throws(CurlewError) {
        try Self.check(configuration)
        self.local = local
        self.store = store
        self.configuration = configuration
        let invalidations = store.invalidations()
        Task { [weak self] in
            for await invalidation in invalidations {
                guard let self else { return }
                await self.evict(invalidation)
            }
        }
    }

    /// Refuses a setting the storage cannot honour (they were taken at their word: a soft
    /// timeout of zero made every lookup a miss, a poll interval of zero spun).
    private static func check(_ configuration: Configuration) throws(CurlewError) {
        func refuse(_ message: String) throws(CurlewError) {
            var error = CurlewError(code: .invalidConnectionSettings, message: "FleetCacheStorage: " + message)
            error.stage = .configuration
            throw error
        }
        var positive = [("softTimeout", configuration.softTimeout), ("writeTimeout", configuration.writeTimeout)]
        var nonNegative = [("breakDuration", configuration.breakDuration)]
        if let flight = configuration.singleFlight {
            positive += [("singleFlight.lockTimeToLive", flight.lockTimeToLive), ("singleFlight.pollInterval", flight.pollInterval)]
            nonNegative.append(("singleFlight.wait", flight.wait))
        }
        for (name, value) in positive where value <= .zero { try refuse("\(name) must be longer than zero, not \(value)") }
        for (name, value) in nonNegative where value < .zero { try refuse("\(name) must be zero or longer, not \(value)") }
        if configuration.failureThreshold < 1 { try refuse("failureThreshold must be at least 1, not \(configuration.failureThreshold)") }
        if configuration.maximumPendingWrites < 1 {
            try refuse("maximumPendingWrites must be at least 1, not \(configuration.maximumPendingWrites)")
        }
        if configuration.instance.allSatisfy(\.isWhitespace) {
            try refuse("instance must name this instance, not \"\(configuration.instance)\"")
        }
    }

    /// Counters since the storage was created.
    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Writes and invalidations waiting for the store.
    public var pendingCount: Int { state.withLock { $0.queue.count } }

    /// Callers of this instance waiting in single-flights for another caller's answer.
    var waitingCallers: Int { state.withLock { $0.flights.values.reduce(0) { $0 + $1.waiters.count } } }

    // MARK: CacheStorage

    /// The first tier's entry, else the store's (under the soft timeout), else — for a `GET`
    /// with single-flight on — the entry another caller fetched meanwhile, else `nil`.
    public func entry(for key: String) async -> CacheEntry? {
        await entry(for: key, lookupBegan: ContinuousClock.now)
    }

    /// ``entry(for:)`` within what is left of the soft timeout of a lookup that began at
    /// `lookupBegan`: a `Vary` variant's lookup, which follows its primary key's.
    package func entry(for key: String, lookupBegan: ContinuousClock.Instant) async -> CacheEntry? {
        if let entry = await local.entry(for: key) {
            count { $0.firstTierHits += 1 }
            metrics.firstTierHits.increment()
            return entry
        }
        let described = FleetKeys.describe(key)
        // One soft timeout for the whole lookup — the read, and on a miss the lock and the read
        // after it, and a `Vary` variant's lookup after its primary key's — not one per round
        // trip: a slow store costs a miss at most that long.
        let deadline = lookupBegan.advanced(by: configuration.softTimeout)
        switch await readStore(described.key, fullKey: key, deadline: deadline) {
        case .hit(let entry):
            return entry
        case .unavailable:
            count { $0.misses += 1 }
            return nil
        case .absent:
            break
        }
        guard let flight = configuration.singleFlight, FleetKeys.isGet(key) else {
            count { $0.misses += 1 }
            return nil
        }
        return await singleFlight(key, fleetKey: described.key, flight, deadline: deadline)
    }

    /// Stores in the first tier at once and queues the write for the store.
    public func store(_ entry: CacheEntry) async throws {
        defer { filled(entry) }
        try await local.store(entry)
        guard let stored = try? FleetEntryCoding.encode(entry) else { return }
        enqueue(.write(stored))
    }

    /// Removes the entry from the first tier, and from the store and every instance.
    public func removeEntry(for key: String) async {
        await local.removeEntry(for: key)
        enqueue(.invalidate(.key(FleetKeys.describe(key).key)))
    }

    /// Removes matching entries from the first tier (the store hears the invalidation itself
    /// through the cache).
    @discardableResult
    public func removeEntries(where predicate: @Sendable (String) -> Bool) async -> Int {
        await local.removeEntries(where: predicate)
    }

    /// Removes expired entries from the first tier (the store expires its own).
    @discardableResult
    public func removeExpired(before date: Date) async -> Int {
        await local.removeExpired(before: date)
    }

    /// Returns when every write and invalidation queued so far has reached the store, or when the
    /// store has been unavailable for `timeout` (then they stay queued). Returns whether the queue
    /// is empty.
    @discardableResult
    public func flush(timeout: Duration = .seconds(10)) async -> Bool {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < deadline {
            if state.withLock({ $0.queue.isEmpty && !$0.sending }) { return true }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return state.withLock { $0.queue.isEmpty && !$0.sending }
    }

    // MARK: Second-tier reads

    private enum Read {
        case hit(CacheEntry)
        case absent
        case unavailable
    }

    /// The lookup's soft timeout left at `deadline`, `nil` once it is spent.
    private static func remaining(until deadline: ContinuousClock.Instant) -> Duration? {
        let left = deadline - ContinuousClock.now
        return left > .zero ? left : nil
    }

    private func readStore(_ fleetKey: String, fullKey: String, deadline: ContinuousClock.Instant) async -> Read {
        let span = startSpan("fleet read")
        defer { span?.end() }
        // The time left is asked first: a call let through an open breaker is its probe, and
        // must report back (a probe that gave up unasked would keep the breaker open for good).
        guard let timeout = Self.remaining(until: deadline) else {
            failOpen("soft timeout spent before the read")
            span?.attributes["curlew.fleet.outcome"] = "timed out"
            return .unavailable
        }
        guard permit() else {
            failOpen("breaker open")
            span?.attributes["curlew.fleet.outcome"] = "breaker open"
            return .unavailable
        }
        let started = ContinuousClock.now
        let outcome: StoreOutcome<FleetEntry?>
        do {
            outcome = .answered(try await store.read(fleetKey, timeout: timeout))
        } catch let error as FleetStoreError where error == .timedOut {
            outcome = .timedOut
        } catch {
            outcome = .failed(error)
        }
        switch outcome {
        case .answered(let stored):
            succeeded()
            metrics.readLatency.recordNanoseconds(Int64(nanoseconds(ContinuousClock.now - started)))
            guard let stored, let entry = FleetEntryCoding.decode(stored, expectedKey: fullKey) else {
                span?.attributes["curlew.fleet.outcome"] = "absent"
                return .absent
            }
            try? await local.store(entry)
            count { $0.secondTierHits += 1 }
            metrics.secondTierHits.increment()
            span?.attributes["curlew.fleet.outcome"] = "hit"
            return .hit(entry)
        case .failed(let error):
            failed()
            failOpen("read failed: \(error)")
            span?.attributes["curlew.fleet.outcome"] = "failed"
            span?.recordError(error)
            return .unavailable
        case .timedOut:
            failed()
            failOpen("read not answered within \(configuration.softTimeout)")
            span?.attributes["curlew.fleet.outcome"] = "timed out"
            return .unavailable
        }
    }

    /// A client span under the caller's context, or `nil` when no tracer records anything (the
    /// same choice a call makes, ``/Curlew/CurlewInstrumentation``).
    private func startSpan(_ name: String) -> (any Span)? {
        CurlewInstrumentation(tracer: configuration.tracer).activeTracer?.startSpan(name, context: ServiceContext.current ?? .topLevel, ofKind: .client)
    }

    // MARK: Single-flight

    /// The callers of one instance waiting for one key: the first asks the fleet for the lock;
    /// the rest wait with it.
    struct Flight {
        var id: UInt64
        /// By waiter (a cancelled waiter leaves).
        var waiters: [UInt64: CheckedContinuation<CacheEntry?, Never>] = [:]
        /// This instance holds the fleet lock: the answer arrives through ``store(_:)``.
        var leading = false
    }

    private func singleFlight(_ key: String, fleetKey: String, _ flight: SingleFlight, deadline: ContinuousClock.Instant) async -> CacheEntry? {
        // The first caller of this instance decides; later ones join its flight.
        let (id, isFirst) = state.withLock { state -> (UInt64, Bool) in
            if let existing = state.flights[key] { return (existing.id, false) }
            state.nextFlight += 1
            state.flights[key] = Flight(id: state.nextFlight)
            return (state.nextFlight, true)
        }
        if !isFirst { return await follow(key, id: id) }
        // A fetch of this instance may have ended since this caller missed the first tier (the
        // store's read takes a while; a loaded machine resumes a caller late). Its answer went
        // into the first tier before its flight ended, and this flight began after that, so one
        // more look finds it: no second flight (this instance's lock is its own, taken again).
        if let entry = await local.entry(for: key) {
            count { $0.firstTierHits += 1 }
            metrics.firstTierHits.increment()
            resolve(key, id: id, with: entry)
            return entry
        }
        scheduleTimeout(key, id: id, after: flight.wait)
        // The time left first, as for a read: a permitted call must report back.
        guard let timeout = Self.remaining(until: deadline) else {
            failOpen("soft timeout spent before the lock")
            resolve(key, id: id, with: nil)
            count { $0.misses += 1 }
            return nil
        }
        guard permit() else {
            failOpen("breaker open (lock)")
            resolve(key, id: id, with: nil)
            return nil
        }
        let store = store
        let owner = configuration.instance
        let span = startSpan("fleet lock")
        let locked = await withSoftTimeout(timeout) {
            try await store.tryLock(fleetKey, owner: owner, ttl: flight.lockTimeToLive)
        }
        switch locked {
        case .answered(true): span?.attributes["curlew.fleet.outcome"] = "taken"
        case .answered(false): span?.attributes["curlew.fleet.outcome"] = "held elsewhere"
        case .failed, .timedOut: span?.attributes["curlew.fleet.outcome"] = "unavailable"
        }
        span?.end()
        switch locked {
        case .answered(true):
            succeeded()
            // The lock may be free because another instance's fetch has just ended. Its answer
            // reached the store before its lock was given back, so one more read finds it.
            if case .hit(let entry) = await readStore(fleetKey, fullKey: key, deadline: deadline) {
                enqueue(.unlock(fleetKey))
                resolve(key, id: id, with: entry)
                return entry
            }
            state.withLock { state in
                state.flights[key]?.leading = true
                state.leading.insert(key)
            }
            count {
                $0.misses += 1
                $0.singleFlightLeads += 1
            }
            return nil
        case .answered(false):
            succeeded()
            Task { await self.poll(key, fleetKey: fleetKey, id: id, flight) }
            return await follow(key, id: id)
        case .failed(let error as FleetStoreError) where error.isRefusal:
            // The store is healthy but cannot lock this key (too long to index): fetch unlocked.
            succeeded()
            resolve(key, id: id, with: nil)
            count { $0.misses += 1 }
            return nil
        case .failed, .timedOut:
            failed()
            failOpen("lock not taken")
            resolve(key, id: id, with: nil)
            count { $0.misses += 1 }
            return nil
        }
    }

    /// Waits for the flight's answer (`nil`: fetch yourself); a cancelled caller stops waiting
    /// at once (and then fails as its call does, cancelled).
    private func follow(_ key: String, id: UInt64) async -> CacheEntry? {
        let waiter = state.withLock { state in
            state.nextFlight += 1
            return state.nextFlight
        }
        let entry = await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<CacheEntry?, Never>) in
                let joined = state.withLock { state -> Bool in
                    guard !Task.isCancelled, state.flights[key]?.id == id else { return false }
                    state.flights[key]?.waiters[waiter] = continuation
                    return true
                }
                if !joined { continuation.resume(returning: nil) }
            }
        } onCancel: {
            state.withLock { $0.flights[key]?.waiters.removeValue(forKey: waiter) }?.resume(returning: nil)
        }
        count {
            if entry != nil { $0.singleFlightFollows += 1 } else { $0.misses += 1 }
        }
        return entry
    }

    /// Another instance fetches: looks for its answer in the store until it arrives or the wait
    /// runs out. Once the store counts as down (the circuit breaker opened on failures in a
    /// row) the flight ends: the answer could only come through the store, so the waiters fetch
    /// for themselves rather than sit out the whole wait.
    private func poll(_ key: String, fleetKey: String, id: UInt64, _ flight: SingleFlight) async {
        let store = store
        while state.withLock({ $0.flights[key]?.id == id }) {
            try? await CallDeadline.sleep(for: flight.pollInterval)
            guard permit() else {
                if resolve(key, id: id, with: nil) { failOpen("breaker open (single-flight wait)") }
                return
            }
            switch await withSoftTimeout(configuration.softTimeout, { try await store.read(fleetKey) }) {
            case .answered(let stored):
                succeeded()
                if let stored, let entry = FleetEntryCoding.decode(stored, expectedKey: key) {
                    try? await local.store(entry)
                    resolve(key, id: id, with: entry)
                    return
                }
                if await endIfAbandoned(key, fleetKey: fleetKey, id: id, flight) { return }
            case .failed, .timedOut:
                failed()
            }
        }
    }

    /// No answer in the store yet, and maybe none coming: when the fetching instance has given
    /// its lock back without storing an answer (its fetch failed or was not cacheable) or the lock
    /// ran out, the flight is over and this instance's waiters fetch for themselves — as a
    /// cache releases the requests that waited for a fetch that stored nothing, rather than making
    /// them queue behind one another. Looks for the answer once more first: it lands before the
    /// lock is given back. Returns whether the flight ended.
    private func endIfAbandoned(_ key: String, fleetKey: String, id: UInt64, _ flight: SingleFlight) async -> Bool {
        let store = store
        let owner = configuration.instance
        guard case .answered(true) = await withSoftTimeout(configuration.softTimeout, { try await store.tryLock(fleetKey, owner: owner, ttl: flight.lockTimeToLive) })
        else { return false }
        enqueue(.unlock(fleetKey))
        var entry: CacheEntry?
        if case .answered(let stored?) = await withSoftTimeout(configuration.softTimeout, { try await store.read(fleetKey) }) {
            entry = FleetEntryCoding.decode(stored, expectedKey: key)
        }
        if let entry { try? await local.store(entry) }
        resolve(key, id: id, with: entry)
        return true
    }

    private func scheduleTimeout(_ key: String, id: UInt64, after wait: Duration) {
        Task {
            try? await CallDeadline.sleep(for: wait)
            if self.resolve(key, id: id, with: nil) {
                self.count { $0.singleFlightTimeouts += 1 }
                self.failOpen("single-flight wait ran out")
            }
        }
    }

    /// Ends a flight: every waiter gets `entry`. Returns whether the flight was still open.
    @discardableResult
    private func resolve(_ key: String, id: UInt64, with entry: CacheEntry?) -> Bool {
        let waiters = state.withLock { state -> [CheckedContinuation<CacheEntry?, Never>]? in
            guard let flight = state.flights[key], flight.id == id else { return nil }
            state.flights[key] = nil
            return Array(flight.waiters.values)
        }
        guard let waiters else { return false }
        waiters.forEach { $0.resume(returning: entry) }
        return true
    }

    /// An answer was stored: this instance's waiters for the key get it, and a lock held for it
    /// is given back once the write has reached the store (even when the waiters stopped waiting).
    private func filled(_ entry: CacheEntry) {
        let finished = state.withLock { state -> (waiters: [CheckedContinuation<CacheEntry?, Never>], leading: Bool) in
            let leading = state.leading.remove(entry.key) != nil
            guard let flight = state.flights.removeValue(forKey: entry.key) else { return ([], leading) }
            return (Array(flight.waiters.values), leading)
        }
        finished.waiters.forEach { $0.resume(returning: entry) }
        if finished.leading { enqueue(.unlock(FleetKeys.describe(entry.key).key)) }
    }

    // MARK: Invalidation

    /// Evicts an invalidation heard from the backplane from the first tier. Queued writes stay:
    /// this instance's own invalidations dropped the ones they cover when they were queued, the
    /// store ignores a write of an answer requested before an invalidation that covers it
    /// (``FleetStore/write(_:)``), and a backplane reconnection (``FleetInvalidation/all`` from
    /// the store) must not lose writes waiting to be replayed.
    func evict(_ invalidation: FleetInvalidation) async {
        count { $0.invalidationsReceived += 1 }
        metrics.invalidations.increment()
        await local.removeEntries { full in
            let described = FleetKeys.describe(full)
            return invalidation.matches(key: described.key, tags: described.tags)
        }
    }

    private func dropQueued(_ invalidation: FleetInvalidation) {
        state.withLock { state in
            state.queue.removeAll { queued in
                guard case .write(let entry) = queued.operation else { return false }
                return invalidation.matches(key: entry.key, tags: entry.tags)
            }
        }
    }

    // MARK: Write-behind

    enum Operation: Sendable {
        case write(FleetEntry)
        case invalidate(FleetInvalidation)
        case unlock(String)
    }

    private func enqueue(_ operation: Operation) {
        if case .invalidate(let invalidation) = operation { dropQueued(invalidation) }
        let start = state.withLock { state -> Bool in
            state.nextOperation += 1
            state.queue.append((state.nextOperation, operation))
            while state.queue.count > configuration.maximumPendingWrites,
                let index = state.queue.firstIndex(where: { if case .write = $0.operation { true } else { false } })
            {
                state.queue.remove(at: index)
                state.statistics.droppedWrites += 1
            }
            guard !state.draining else { return false }
            state.draining = true
            return true
        }
        if start { Task { await self.drain() } }
    }

    /// Sends queued operations in order; a failure keeps the operation at the head, opens the
    /// breaker after enough of them and waits for the breaker's probe time before retrying.
    private func drain() async {
        let store = store
        while true {
            let next = state.withLock { state -> (id: UInt64, operation: Operation)? in
                guard let head = state.queue.first else {
                    state.draining = false
                    return nil
                }
                state.sending = true
                return head
            }
            guard let (id, operation) = next else { return }
            if case .write(let entry) = operation, let requestedAt = entry.requestedAt, Self.isTooOldToReplay(requestedAt) {
                // The store may have forgotten an invalidation that covers it: dropped, not risked.
                state.withLock { state in
                    state.queue.removeAll { $0.id == id }
                    state.sending = false
                    state.statistics.droppedWrites += 1
                }
                continue
            }
            guard permit() else {
                state.withLock { $0.sending = false }
                try? await CallDeadline.sleep(for: retryPause)
                continue
            }
            let outcome = await withSoftTimeout(configuration.writeTimeout) {
                switch operation {
                case .write(let entry): try await store.write(entry)
                case .invalidate(let invalidation): try await store.invalidate(invalidation)
                case .unlock(let key): try await store.unlock(key, owner: self.configuration.instance)
                }
            }
            if case .failed(let error) = outcome, (error as? FleetStoreError)?.isRefusal == true {
                // The store answered: it is healthy, and this operation can never land.
                succeeded()
                configuration.logger.debug("fleet store: an operation was refused and dropped (\(error))")
                state.withLock { state in
                    state.queue.removeAll { $0.id == id }
                    state.sending = false
                    state.statistics.refusedWrites += 1
                }
            } else if case .answered = outcome {
                succeeded()
                state.withLock { state in
                    // Removed by id: an invalidation may have dropped it (and others) meanwhile.
                    state.queue.removeAll { $0.id == id }
                    state.sending = false
                    state.statistics.storeWrites += 1
                }
            } else {
                failed()
                state.withLock { state in
                    state.sending = false
                    state.statistics.storeWriteFailures += 1
                }
                metrics.writeFailures.increment()
                try? await CallDeadline.sleep(for: retryPause)
            }
        }
    }

    /// How long the write queue waits after a failure or while the breaker is open: a quarter of
    /// the break, at least 10 ms (a zero break would otherwise retry a down store back to back).
    private var retryPause: Duration { max(configuration.breakDuration / 4, .milliseconds(10)) }

    /// Whether a write whose request was sent at `requestedAt` has waited too long to be sent:
    /// within five minutes of ``FleetInvalidation/memory``, the margin for clocks that disagree.
    static func isTooOldToReplay(_ requestedAt: Date, now: Date = Date()) -> Bool {
        now.timeIntervalSince(requestedAt) > Double(FleetInvalidation.memory.components.seconds) - 300
    }

    // MARK: Circuit breaker

    private func permit() -> Bool {
        state.withLock { $0.breaker.permit(now: .now) }
    }

    private func succeeded() {
        state.withLock { $0.breaker.succeeded() }
    }

    private func failed() {
        let opened = state.withLock { state -> Bool in
            let opened = state.breaker.failed(now: .now, threshold: configuration.failureThreshold, pause: configuration.breakDuration)
            if opened { state.statistics.breakerOpenings += 1 }
            return opened
        }
        if opened {
            metrics.breakerOpenings.increment()
            configuration.logger.warning("fleet store: circuit breaker open for \(configuration.breakDuration)")
        }
    }

    // MARK: Counting

    private func count(_ change: (inout Statistics) -> Void) {
        state.withLock { change(&$0.statistics) }
    }

    private func failOpen(_ reason: String) {
        count { $0.failOpenReads += 1 }
        metrics.failOpen.increment()
        configuration.logger.debug("fleet store: going on without it (\(reason))")
    }

    struct State {
        var statistics = Statistics()
        var breaker = CircuitBreaker()
        var flights: [String: Flight] = [:]
        var nextFlight: UInt64 = 0
        var queue: [(id: UInt64, operation: Operation)] = []
        var nextOperation: UInt64 = 0
        /// Keys whose fleet lock this instance holds until it stores their answer.
        var leading: Set<String> = []
        var draining = false
        var sending = false
    }
}

/// Closed, open until a time, then one probe at a time until a success closes it.
struct CircuitBreaker: Sendable {
    private(set) var failures = 0
    private(set) var openUntil: ContinuousClock.Instant?
    private var probing = false

    /// Whether a call may go to the store now (a call let through an open breaker is its probe).
    mutating func permit(now: ContinuousClock.Instant) -> Bool {
        guard let openUntil else { return true }
        guard now >= openUntil, !probing else { return false }
        probing = true
        return true
    }

    mutating func succeeded() {
        failures = 0
        openUntil = nil
        probing = false
    }

    /// Counts a failure; returns whether the breaker opened now.
    mutating func failed(now: ContinuousClock.Instant, threshold: Int, pause: Duration) -> Bool {
        failures += 1
        if openUntil != nil {
            openUntil = now.advanced(by: pause)
            probing = false
            return false
        }
        guard failures >= threshold else { return false }
        openUntil = now.advanced(by: pause)
        return true
    }
}

/// Whole nanoseconds, saturating: a setting of `.seconds(Int64.max)` (in effect, forever) is
/// about 292 years rather than an overflow.
func nanoseconds(_ duration: Duration) -> Int64 {
    duration.saturatingNanoseconds
}

/// The swift-metrics instruments of the fleet (no-ops until the application bootstraps a
/// backend).
struct FleetMetrics: Sendable {
    let firstTierHits = Counter(label: "curlew_fleet_cache_hits", dimensions: [("tier", "first")])
    let secondTierHits = Counter(label: "curlew_fleet_cache_hits", dimensions: [("tier", "second")])
    let failOpen = Counter(label: "curlew_fleet_fail_open", dimensions: [("what", "cache")])
    let breakerOpenings = Counter(label: "curlew_fleet_breaker_openings")
    let writeFailures = Counter(label: "curlew_fleet_store_write_failures")
    let invalidations = Counter(label: "curlew_fleet_invalidations_received")
    let readLatency = Metrics.Timer(label: "curlew_fleet_store_latency", dimensions: [("operation", "read")])
}

extension FleetCacheStorage: SharedCacheTier {
    /// Sends the cache's invalidation to the store (queued like a write, so it follows the writes
    /// before it), which removes the shared entries and tells every instance.
    package func didInvalidate(_ target: CacheInvalidation) async {
        enqueue(.invalidate(FleetKeys.invalidation(for: target)))
    }

    /// A lookup ended with no answer to store (an error, a `no-store` or uncacheable response, a
    /// cancelled call): this instance's waiters for the key are released at once to fetch for
    /// themselves, and the fleet lock this instance took for it is given back — instead of both
    /// lasting until the single-flight wait and the lock's time to live run out. When an answer
    /// is being stored, ``store(_:)`` ends the flight.
    package func lookupEnded(for key: String, storing: Bool) async {
        guard !storing else { return }
        let ended = state.withLock { state -> (waiters: [CheckedContinuation<CacheEntry?, Never>], leading: Bool) in
            guard state.leading.remove(key) != nil else { return ([], false) }
            let waiters = state.flights.removeValue(forKey: key).map { Array($0.waiters.values) } ?? []
            return (waiters, true)
        }
        guard ended.leading else { return }
        ended.waiters.forEach { $0.resume(returning: nil) }
        enqueue(.unlock(FleetKeys.describe(key).key))
    }
}

extension FleetCacheStorage: Service {
    /// Waits for graceful shutdown, then flushes the queued writes (for at most 5 s). Put the
    /// storage after its store in the `ServiceGroup`: services shut down in reverse order, so the
    /// store still runs while the storage drains.
    public func run() async throws {
        try? await gracefulShutdown()
        await flush(timeout: .seconds(5))
    }
}
