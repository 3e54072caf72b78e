public import Foundation

/// Where a ``ResponseCache`` keeps its entries. Implementations are `Sendable` and async (an
/// actor is the natural shape): ``MemoryCacheStorage`` and the crash-safe ``DiskCacheStorage``
/// come with Curlew; a SQLite or Redis store implements the same five requirements.
///
/// A storage compares the full key on read (a different key under the same slot is a miss),
/// never returns a partial entry, and treats damaged data as absent.
public protocol CacheStorage: Sendable {
    /// The entry stored under `key`, or `nil`.
    func entry(for key: String) async -> CacheEntry?
    /// Stores `entry` under ``CacheEntry/key``, replacing any previous one.
    /// - Throws: When the entry could not be written (full disk, read-only directory); the
    ///   ``ResponseCache`` logs it at debug level and the request still succeeds.
    func store(_ entry: CacheEntry) async throws
    /// Removes the entry under `key`, if any.
    func removeEntry(for key: String) async
    /// Removes every entry whose key satisfies `predicate`; returns how many.
    @discardableResult
    func removeEntries(where predicate: @Sendable (String) -> Bool) async -> Int
    /// Removes entries whose ``CacheEntry/discardAfter`` is before `date`; returns how many.
    @discardableResult
    func removeExpired(before date: Date) async -> Int
}

/// A ``CacheStorage`` whose writes cost no more than handing them over (``MemoryCacheStorage``):
/// the ``ResponseCache`` applies them on the caller's path, where a slow storage's are queued for
/// a background drain (`PendingWrites`).
package protocol InlineWritableCacheStorage: CacheStorage {}

/// A ``CacheStorage`` that is a tier shared with other instances (CurlewFleet's two-tier
/// storage) and so hears two things a storage of one process need not:
/// - each ``ResponseCache/invalidate(_:)`` as it was asked (a key, a prefix, an account), not only
///   as the key predicate its ``CacheStorage/removeEntries(where:)`` receives, to forward it to
///   the shared store and the other instances; called after the local removal;
/// - the end of every call that looked a key up, with whether an answer is on its way to
///   ``CacheStorage/store(_:)``: a tier that made other callers wait for this one's answer
///   (single-flight) releases them at once when none is coming;
/// - when a lookup began, so a call's `Vary` variant lookup, which follows the lookup of its
///   primary key, spends what is left of the same time budget rather than a budget of its own.
package protocol SharedCacheTier: CacheStorage {
    /// The entry for `key`, looked up as part of a call's lookup that began at `lookupBegan`
    /// (``CacheStorage/entry(for:)`` is a lookup that begins now).
    func entry(for key: String, lookupBegan: ContinuousClock.Instant) async -> CacheEntry?
    /// `target` was invalidated through the cache.
    func didInvalidate(_ target: CacheInvalidation) async
    /// A call that looked up `key` has its answer; `storing` says whether the cache accepted an
    /// answer for storing (``CacheStorage/store(_:)`` follows, or already ran).
    func lookupEnded(for key: String, storing: Bool) async
}
