public import Foundation

/// What a fleet of instances shares: a second cache tier, an invalidation backplane, locks with a
/// time to live and leases on named limits. ``PostgresFleetStore`` keeps them in PostgreSQL,
/// ``InMemoryFleetStore`` in one process (tests); a Redis or Valkey store implements the same
/// requirements and plugs into ``FleetCacheStorage`` and ``FleetLimiter`` unchanged.
///
/// Every requirement may throw when the store is unreachable; callers in CurlewFleet treat that
/// as "no answer" and go on without the store (they fail open), so an implementation reports
/// errors rather than retrying at length.
public protocol FleetStore: Sendable {
    /// The entry stored under `key` and not yet expired, or `nil`.
    func read(_ key: String) async throws -> FleetEntry?
    /// ``read(_:)`` for a caller that waits at most `timeout`: returns or throws by then —
    /// ``FleetStoreError/timedOut`` when the store has not answered — and drops a later answer.
    /// ``FleetCacheStorage`` reads through it under its soft timeout. The default runs
    /// ``read(_:)`` in a task of its own next to a timer task; a store with timers of its own
    /// does it cheaper (``PostgresFleetStore``: a timer on the connection's event loop).
    func read(_ key: String, timeout: Duration) async throws -> FleetEntry?
    /// Stores `entry` under ``FleetEntry/key``, replacing any previous one — unless the write
    /// would bring back an older answer: it is ignored when the stored entry's
    /// ``FleetEntry/requestedAt`` is later, or when an invalidation covering the entry reached the
    /// store after the entry's ``FleetEntry/requestedAt`` (within ``FleetInvalidation/memory``).
    /// A write the store refuses for its content (a key too long to index) throws a
    /// ``FleetStoreError`` with ``FleetStoreError/isRefusal`` set.
    func write(_ entry: FleetEntry) async throws
    /// Removes the matching entries from the store, remembers the invalidation for
    /// ``FleetInvalidation/memory`` (see ``write(_:)``) and tells every subscriber (this
    /// instance's too) through ``invalidations()``.
    func invalidate(_ target: FleetInvalidation) async throws
    /// Invalidations published by any instance, as they arrive. Each call returns a new
    /// subscription; it ends when the store shuts down.
    func invalidations() -> AsyncStream<FleetInvalidation>
    /// Takes the lock on `key` for `owner` unless another owner holds it and its time to live has
    /// not run out; returns whether `owner` holds it now. A store that can tell a holder has died
    /// frees its locks sooner (``PostgresFleetStore``: once the holder's connection has ended).
    func tryLock(_ key: String, owner: String, ttl: Duration) async throws -> Bool
    /// Gives back the lock on `key` when `owner` holds it.
    func unlock(_ key: String, owner: String) async throws
    /// Renews `holder`'s lease on the named limit for `ttl`: grants as many of `wanted` slots as
    /// the limit allows next to the other holders' unexpired leases (see ``FleetLease``), and
    /// records `max(granted, inUse)` as held — `inUse` is the most the holder may be running now
    /// (its local limit or its running calls), so slots are given to others only once the holder
    /// has stopped using them. `wanted` 0 with `inUse` 0 gives every slot back.
    func lease(_ limit: String, capacity: Int, holder: String, wanted: Int, inUse: Int, ttl: Duration) async throws -> FleetLease
}

extension FleetStore {
    /// ``read(_:)`` under a soft timeout (see ``FleetStore/read(_:timeout:)``).
    public func read(_ key: String, timeout: Duration) async throws -> FleetEntry? {
        try await readUnderSoftTimeout(self, key, timeout)
    }
}

/// ``FleetStore/read(_:)`` in a task of its own, given up after `timeout`.
func readUnderSoftTimeout(_ store: some FleetStore, _ key: String, _ timeout: Duration) async throws -> FleetEntry? {
    switch await withSoftTimeout(timeout, { try await store.read(key) }) {
    case .answered(let entry): return entry
    case .failed(let error): throw error
    case .timedOut: throw FleetStoreError.timedOut
    }
}

/// One entry of the shared cache tier: the stored answer's bytes with the facts needed to find,
/// validate and expire it without decoding them.
public struct FleetEntry: Sendable, Hashable {
    /// The key it is stored under.
    public var key: String
    /// Labels an invalidation can name (``FleetInvalidation/tag(_:)``), e.g. the credential scope.
    public var tags: [String]
    /// The `ETag` validator, when the answer had one.
    public var etag: String?
    /// The `Last-Modified` validator, when the answer had one.
    public var lastModified: String?
    /// After this date the store no longer returns the entry; `nil` for never.
    public var expiresAt: Date?
    /// The encoded entry.
    public var payload: Data
    /// When the request that fetched the answer was sent, by the fetching instance's clock: a
    /// write does not replace an entry requested later, and does not land after an invalidation
    /// that covers it (a write replayed after an outage never brings back what a purge removed
    /// or what another instance fetched since). `nil`: the write always lands.
    public var requestedAt: Date?

    /// Creates an entry.
    public init(
        key: String, tags: [String] = [], etag: String? = nil, lastModified: String? = nil, expiresAt: Date? = nil, payload: Data,
        requestedAt: Date? = nil
    ) {
        self.key = key
        self.tags = tags
        self.etag = etag
        self.lastModified = lastModified
        self.expiresAt = expiresAt
        self.payload = payload
        self.requestedAt = requestedAt
    }

    /// Whether this write must not replace `stored`, which was requested later.
    func isOlder(than stored: FleetEntry) -> Bool {
        guard let requestedAt, let storedRequest = stored.requestedAt else { return false }
        return requestedAt < storedRequest
    }
}

/// Which shared entries an invalidation removes, and which first-tier entries every instance
/// evicts when it hears it.
public enum FleetInvalidation: Sendable, Hashable {
    /// The entry under one key.
    case key(String)
    /// Every entry whose key starts with this text.
    case prefix(String)
    /// Every entry carrying this tag.
    case tag(String)
    /// Every entry.
    case all

    /// How long a store remembers an invalidation for ``FleetStore/write(_:)``: an hour. A write
    /// of an answer requested before an invalidation that covers it is ignored when it arrives
    /// within this time; ``FleetCacheStorage`` drops a queued write older than that.
    public static let memory: Duration = .seconds(3_600)

    /// Whether an entry with `key` and `tags` is affected.
    public func matches(key: String, tags: [String]) -> Bool {
        switch self {
        case .key(let exact): key == exact
        case .prefix(let prefix): key.hasPrefix(prefix)
        case .tag(let tag): tags.contains(tag)
        case .all: true
        }
    }

    /// The text sent over a backplane: a one-letter kind, `:`, the argument.
    public var message: String {
        switch self {
        case .key(let key): "k:" + key
        case .prefix(let prefix): "p:" + prefix
        case .tag(let tag): "t:" + tag
        case .all: "*"
        }
    }

    /// Reads ``message``; `nil` for text that is not one.
    public init?(message: String) {
        if message == "*" {
            self = .all
            return
        }
        guard message.utf8.count >= 2, message.utf8.dropFirst().first == UInt8(ascii: ":") else { return nil }
        let argument = String(message.dropFirst(2))
        switch message.first {
        case "k": self = .key(argument)
        case "p": self = .prefix(argument)
        case "t": self = .tag(argument)
        default: return nil
        }
    }
}

/// A holder's share of a named limit.
public struct FleetLease: Sendable, Hashable {
    /// Slots this holder may use until the lease runs out.
    public var granted: Int
    /// Holders with an unexpired lease row on the limit, this one included (the instance count
    /// a local fallback divides the limit by).
    public var holders: Int

    /// Creates a lease.
    public init(granted: Int, holders: Int) {
        self.granted = granted
        self.holders = holders
    }
}

/// The store did not answer in time or refused: what ``FleetCacheStorage`` and ``FleetLimiter``
/// count and go on without.
public struct FleetStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What failed, without secrets.
    public var description: String

    /// Whether the store answered and refused the operation for what it holds (a key too long
    /// to index, bytes it cannot store): sending it again cannot help, so ``FleetCacheStorage``
    /// drops it (``FleetCacheStorage/Statistics/refusedWrites``) instead of retrying it, and
    /// does not count it against the store's health.
    public var isRefusal: Bool

    /// Creates an error.
    public init(_ description: String) {
        self.description = description
        self.isRefusal = false
    }

    /// The store did not answer within the caller's timeout (``FleetStore/read(_:timeout:)``).
    public static let timedOut = FleetStoreError("not answered in time")

    /// The store refused the operation for its content (see ``isRefusal``).
    public static func refused(_ description: String) -> FleetStoreError {
        var error = FleetStoreError(description)
        error.isRefusal = true
        return error
    }
}

extension FleetStoreError: LocalizedError {
    /// The ``description``, so `localizedDescription` says what failed.
    public var errorDescription: String? { description }
}
