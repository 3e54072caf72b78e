public import Foundation

/// A ``CacheStorage`` in memory, bounded by bytes, evicting the least recently used entries.
public actor MemoryCacheStorage: CacheStorage, InlineWritableCacheStorage {
    /// The most bytes kept (``CacheEntry/size`` summed).
    public nonisolated let maximumBytes: Int
    /// Each entry with its place in `recency` and its ``CacheEntry/size`` (counted once, when
    /// stored: it sums the lengths of every header).
    private var entries: [String: (entry: CacheEntry, slot: RecencyList<String>.Slot, size: Int)] = [:]
    /// The keys of `entries`, least recently used first.
    private var recency = RecencyList<String>()
    /// Bytes held now.
    public private(set) var totalBytes = 0

    /// Creates an empty store holding at most `maximumBytes`. Default: 16 MiB.
    public init(maximumBytes: Int = 16 << 20) {
        self.maximumBytes = max(0, maximumBytes)
    }

    /// How many entries are held.
    public var count: Int { entries.count }

    /// The keys held, sorted (for tests).
    var keys: [String] { entries.keys.sorted() }

    /// The entry, marking it recently used.
    public func entry(for key: String) -> CacheEntry? {
        guard let index = entries.index(forKey: key) else { return nil }
        let found = entries.values[index]
        recency.use(found.slot)
        return found.entry
    }

    /// Stores the entry, evicting least recently used ones beyond ``maximumBytes``; an entry
    /// larger than the whole bound is not kept.
    public func store(_ entry: CacheEntry) {
        removeEntry(for: entry.key)
        let size = entry.size
        guard size <= maximumBytes else { return }
        entries[entry.key] = (entry, recency.add(entry.key), size)
        totalBytes += size
        while totalBytes > maximumBytes, let oldest = recency.leastRecent {
            removeEntry(for: oldest)
        }
    }

    /// Removes one entry.
    public func removeEntry(for key: String) {
        guard let old = entries.removeValue(forKey: key) else { return }
        totalBytes -= old.size
        recency.remove(old.slot)
    }

    /// Removes the entries whose key matches.
    @discardableResult
    public func removeEntries(where predicate: @Sendable (String) -> Bool) -> Int {
        let doomed = entries.keys.filter(predicate)
        doomed.forEach(removeEntry(for:))
        return doomed.count
    }

    /// Removes the entries past their ``CacheEntry/discardAfter``.
    @discardableResult
    public func removeExpired(before date: Date) -> Int {
        let doomed = entries.filter { $0.value.entry.discardAfter.map { $0 < date } ?? false }.map(\.key)
        doomed.forEach(removeEntry(for:))
        return doomed.count
    }
}
