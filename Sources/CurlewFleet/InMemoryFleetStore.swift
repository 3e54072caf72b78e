internal import Foundation

/// A ``FleetStore`` inside one process, for tests: several ``FleetCacheStorage`` or
/// ``FleetLimiter`` values sharing one instance behave like instances sharing one database.
/// ``setOutage(_:)`` makes every call fail (or hang) the way an unreachable store does.
public actor InMemoryFleetStore: FleetStore {
    /// How the store misbehaves.
    public enum Outage: Sendable, Hashable {
        /// Answers normally.
        case none
        /// Every call throws at once (connection refused).
        case failing
        /// Every call waits this long, then throws (a store that stopped answering).
        case hanging(Duration)
    }

    private var entries: [String: FleetEntry] = [:]
    /// Invalidations of the last ``FleetInvalidation/memory``, oldest first, for ``write(_:)``.
    private var purges: [(target: FleetInvalidation, at: Date)] = []
    private var locks: [String: (owner: String, until: ContinuousClock.Instant)] = [:]
    private var leases: [String: [String: (slots: Int, wanted: Int, until: ContinuousClock.Instant)]] = [:]
    private var outage = Outage.none
    private let subscribers = InvalidationBroadcast()
    /// How many requirements were called (tests count round trips).
    public private(set) var calls = 0
    /// How many writes landed.
    public private(set) var writes = 0

    /// An empty store.
    public init() {}

    /// Starts or ends an outage.
    public func setOutage(_ outage: Outage) {
        self.outage = outage
    }

    /// The keys held now.
    public var keys: [String] { entries.keys.sorted() }

    /// The keys locked now (``tryLock(_:owner:ttl:)``, not given back, not run out).
    public var lockedKeys: [String] {
        let now = ContinuousClock.now
        return locks.filter { $0.value.until > now }.keys.sorted()
    }

    private func check() async throws {
        calls += 1
        switch outage {
        case .none: return
        case .failing: throw FleetStoreError("in-memory store: outage")
        case .hanging(let duration):
            try await Task.sleep(for: duration)
            throw FleetStoreError("in-memory store: timed out")
        }
    }

    /// The unexpired entry under `key`, or `nil`.
    public func read(_ key: String) async throws -> FleetEntry? {
        try await check()
        guard let entry = entries[key] else { return nil }
        if let expiry = entry.expiresAt, expiry <= Date() { return nil }
        return entry
    }

    /// Stores the entry, replacing any previous one under its key, unless that would bring back
    /// an older answer (see ``FleetStore/write(_:)``).
    public func write(_ entry: FleetEntry) async throws {
        try await check()
        if let stored = entries[entry.key], entry.isOlder(than: stored) { return }
        if let requestedAt = entry.requestedAt, purges.contains(where: { $0.at > requestedAt && $0.target.matches(key: entry.key, tags: entry.tags) }) {
            return
        }
        entries[entry.key] = entry
        writes += 1
        // Expired entries go now and then, as the PostgreSQL store's sweep removes its rows.
        if writes % 256 == 0 {
            let now = Date()
            entries = entries.filter { $0.value.expiresAt.map { $0 > now } ?? true }
        }
    }

    /// Removes the matching entries, remembers the invalidation and tells every subscriber.
    public func invalidate(_ target: FleetInvalidation) async throws {
        try await check()
        entries = entries.filter { !target.matches(key: $0.key, tags: $0.value.tags) }
        let now = Date()
        purges.removeAll { now.timeIntervalSince($0.at) > Double(FleetInvalidation.memory.components.seconds) }
        purges.append((target, now))
        subscribers.publish(target)
    }

    /// A new subscription to every instance's invalidations.
    public nonisolated func invalidations() -> AsyncStream<FleetInvalidation> {
        subscribers.subscribe()
    }

    /// Ends every subscription (the store shut down).
    public nonisolated func finishSubscriptions() {
        subscribers.finish()
    }

    /// Takes the lock unless another owner holds an unexpired one; returns whether `owner` holds it.
    public func tryLock(_ key: String, owner: String, ttl: Duration) async throws -> Bool {
        try await check()
        let now = ContinuousClock.now
        if let held = locks[key], held.until > now, held.owner != owner { return false }
        locks = locks.filter { $0.value.until > now }
        locks[key] = (owner, now.advanced(by: ttl))
        return true
    }

    /// Gives the lock back when `owner` holds it.
    public func unlock(_ key: String, owner: String) async throws {
        try await check()
        if locks[key]?.owner == owner { locks[key] = nil }
    }

    /// Renews `holder`'s lease (see ``FleetStore/lease(_:capacity:holder:wanted:inUse:ttl:)``).
    public func lease(_ limit: String, capacity: Int, holder: String, wanted: Int, inUse: Int, ttl: Duration) async throws -> FleetLease {
        try await check()
        let now = ContinuousClock.now
        var rows = (leases[limit] ?? [:]).filter { $0.value.until > now }
        rows[holder] = nil
        let others = rows.values.reduce(0) { $0 + $1.slots }
        let wanting = rows.values.filter { $0.wanted > 0 }.count
        let granted = FleetLeaseRules.grant(capacity: capacity, wanted: wanted, othersHeld: others, othersWanting: wanting)
        rows[holder] = (max(granted, inUse), wanted, now.advanced(by: ttl))
        leases[limit] = rows
        return FleetLease(granted: granted, holders: rows.count)
    }

    /// Slots held on `limit` by unexpired leases (tests check the sum never passes the capacity).
    public func leased(_ limit: String) -> Int {
        let now = ContinuousClock.now
        return (leases[limit] ?? [:]).values.filter { $0.until > now }.reduce(0) { $0 + $1.slots }
    }
}

/// How a lease request is granted, the same in every store.
enum FleetLeaseRules {
    /// As many of `wanted` as are free next to the other holders' slots, and no more than a fair
    /// share (`capacity` ÷ holders that want slots, rounded up) while other holders want slots:
    /// an instance with steady demand gives slots back, at its next renewal, to one that starts
    /// asking later.
    static func grant(capacity: Int, wanted: Int, othersHeld: Int, othersWanting: Int) -> Int {
        let free = max(0, capacity - othersHeld)
        var granted = min(max(0, wanted), free)
        if othersWanting > 0 {
            granted = min(granted, (capacity + othersWanting) / (othersWanting + 1))
        }
        return granted
    }
}
