public import Foundation
public import Logging
#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// A ``CacheStorage`` in a directory, surviving crashes and bounded by bytes — the default store.
///
/// - **Crash-safe:** each entry is written to a temporary file in the directory, fsynced,
///   renamed over the old one, and the directory fsynced; a crash leaves the old entry or the new
///   one, never a mix. Stray temporary files are removed when the store opens.
/// - **Checked:** an entry records its key, its lengths and a 64-bit checksum of its bytes; a
///   truncated, bit-flipped or half-written file is a miss and is deleted. File names are the full SHA-256
///   of the key, and the stored key is compared on read (a collision is a miss), so a key with
///   `../` or of any length names a file inside the directory.
/// - **Private:** the directory is 0700 and files 0600 whatever the umask.
/// - **Bounded:** beyond ``maximumBytes`` the least recently used entries are deleted;
///   ``removeExpired(before:)`` deletes entries past their ``CacheEntry/discardAfter`` (also done
///   on open). A deleted directory is recreated on the next write.
///
/// Reads load the whole entry while the actor is held, so eviction by another call cannot cut a
/// read short.
public actor DiskCacheStorage: CacheStorage {
    private struct Item {
        var key: String
        var length: Int
        var discardAfter: Date?
        /// Where the entry sits in `recency`.
        var slot: RecencyList<String>.Slot
    }

    /// The cache directory.
    public nonisolated let directory: String
    /// The most bytes of entry files kept.
    public nonisolated let maximumBytes: Int
    private let logger: Logger
    private let now: @Sendable () -> Date
    /// The entries held, by file name.
    private var index: [String: Item] = [:]
    /// The file names of `index`, least recently used first.
    private var recency = RecencyList<String>()
    private var opened = false
    /// File names of recently used keys (a SHA-256 per hit saved); cleared when it grows large.
    private var names: [String: String] = [:]
    /// Bytes of entry files held now.
    public private(set) var totalBytes = 0

    /// A store in `directory` (created when needed) holding at most `maximumBytes`.
    /// Default: 256 MiB.
    public init(
        directory: String, maximumBytes: Int = 256 << 20, logger: Logger = Logger(label: "curlew.cache"),
        now: @escaping @Sendable () -> Date = { Date() }
    ) {
        self.directory = directory.hasSuffix("/") && directory.count > 1 ? String(directory.dropLast()) : directory
        self.maximumBytes = max(0, maximumBytes)
        self.logger = logger
        self.now = now
    }

    /// How many entries the index holds.
    public var count: Int {
        openIfNeeded()
        return index.count
    }

    /// The entry for `key`, or `nil` when absent, damaged (deleted) or stored under another key.
    public func entry(for key: String) -> CacheEntry? {
        openIfNeeded()
        let name = fileName(for: key)
        guard let file = DiskFiles.read(path(name)) else {
            forget(name)
            return nil
        }
        guard let entry = DiskEntryFormat.decode(file) else {
            logger.debug("cache: damaged entry \(name) deleted")
            DiskFiles.remove(path(name))
            forget(name)
            return nil
        }
        guard entry.key == key else { return nil }
        record(name, key: key, length: file.count, discardAfter: entry.discardAfter)
        return entry
    }

    /// Writes the entry crash-safely, then evicts least recently used entries beyond the bound.
    /// An entry larger than the whole bound is not kept, and the older entry under its key is
    /// deleted: the key never goes on answering with what the newer answer replaced.
    /// - Throws: An error naming the failed file operation and its `errno` when the directory
    ///   cannot be created or written.
    public func store(_ entry: CacheEntry) throws {
        openIfNeeded()
        let file = try DiskEntryFormat.encode(entry)
        let name = fileName(for: entry.key)
        guard file.count <= maximumBytes else {
            logger.debug("cache: entry \(name) of \(file.count) bytes is above the bound of \(maximumBytes); not stored")
            DiskFiles.remove(path(name))
            forget(name)
            return
        }
        do {
            try DiskFiles.replace(name, in: directory, with: file)
        } catch let error as DiskCacheError where error.code == ENOENT {
            // The directory was deleted under us: recreate it, start a fresh index, write again.
            try DiskFiles.ensureDirectory(directory)
            index.removeAll()
            recency.removeAll()
            totalBytes = 0
            try DiskFiles.replace(name, in: directory, with: file)
        }
        record(name, key: entry.key, length: file.count, discardAfter: entry.discardAfter)
        evict(keeping: name)
    }

    /// Deletes the entry for `key`.
    public func removeEntry(for key: String) {
        openIfNeeded()
        let name = fileName(for: key)
        DiskFiles.remove(path(name))
        forget(name)
    }

    /// Deletes the entries whose key matches, including entries another store (or process)
    /// wrote into the directory since this one opened.
    @discardableResult
    public func removeEntries(where predicate: @Sendable (String) -> Bool) -> Int {
        openIfNeeded()
        indexNewFiles()
        let doomed = index.filter { predicate($0.value.key) }.map(\.key)
        for name in doomed {
            DiskFiles.remove(path(name))
            forget(name)
        }
        return doomed.count
    }

    /// Deletes the entries past their ``CacheEntry/discardAfter``, including entries another
    /// store (or process) wrote into the directory since this one opened.
    @discardableResult
    public func removeExpired(before date: Date) -> Int {
        openIfNeeded()
        indexNewFiles()
        return removeIndexedExpired(before: date)
    }

    /// Deletes the indexed entries past their ``CacheEntry/discardAfter``.
    @discardableResult
    private func removeIndexedExpired(before date: Date) -> Int {
        let doomed = index.filter { $0.value.discardAfter.map { $0 < date } ?? false }.map(\.key)
        for name in doomed {
            DiskFiles.remove(path(name))
            forget(name)
        }
        return doomed.count
    }

    // MARK: Opening

    /// Creates the directory, sweeps temporary files, indexes intact entries (deleting damaged
    /// ones), drops expired ones and applies the size bound. Runs once, on first use.
    private func openIfNeeded() {
        guard !opened else { return }
        opened = true
        do {
            try DiskFiles.ensureDirectory(directory)
        } catch {
            logger.debug("cache: cannot prepare \(directory): \(error)")
            return
        }
        var found: [(name: String, key: String, length: Int, discardAfter: Date?, modified: Double)] = []
        for name in DiskFiles.names(in: directory) {
            if name.hasPrefix(DiskFiles.temporaryPrefix) {
                if DiskFiles.isAbandonedTemporary(name, modified: DiskFiles.status(path(name))?.modified) {
                    DiskFiles.remove(path(name))
                }
                continue
            }
            guard name.hasSuffix(".entry") else { continue }
            guard let status = DiskFiles.status(path(name)), let summary = Self.summary(of: path(name), length: status.length) else {
                logger.debug("cache: damaged entry \(name) deleted on open")
                DiskFiles.remove(path(name))
                continue
            }
            found.append((name, summary.key, status.length, summary.discardAfter, status.modified))
        }
        // The least recently written first: until it is read again, an entry counts as used when written.
        for file in found.sorted(by: { $0.modified < $1.modified }) {
            record(file.name, key: file.key, length: file.length, discardAfter: file.discardAfter)
        }
        removeIndexedExpired(before: now())
        evict(keeping: nil)
    }

    /// Brings the index up to date with the directory before a removal: files another store or
    /// process wrote since this one opened are indexed (so invalidating here reaches them),
    /// and files deleted elsewhere are forgotten. Damaged files are left to the next read.
    private func indexNewFiles() {
        var present = Set<String>()
        for name in DiskFiles.names(in: directory) where name.hasSuffix(".entry") && !name.hasPrefix(DiskFiles.temporaryPrefix) {
            present.insert(name)
            guard index[name] == nil, let status = DiskFiles.status(path(name)),
                let summary = Self.summary(of: path(name), length: status.length)
            else { continue }
            record(name, key: summary.key, length: status.length, discardAfter: summary.discardAfter)
        }
        for name in index.keys where !present.contains(name) { forget(name) }
    }

    /// The key and expiry of an entry file, checking its structure but not its checksum (that
    /// is checked on every read).
    private static func summary(of path: String, length: Int) -> DiskEntryFormat.Summary? {
        guard let prefix = DiskFiles.read(path, upTo: DiskEntryFormat.prefixLength),
            let (headerLength, bodyLength) = DiskEntryFormat.lengths(prefix),
            length == DiskEntryFormat.prefixLength + headerLength + bodyLength + DiskEntryFormat.checksumLength,
            let head = DiskFiles.read(path, upTo: DiskEntryFormat.prefixLength + headerLength)
        else { return nil }
        return DiskEntryFormat.summary(prefixAndHeader: head, fileLength: length)
    }

    // MARK: Bookkeeping

    private func path(_ name: String) -> String { directory + "/" + name }

    private func fileName(for key: String) -> String {
        if let known = names[key] { return known }
        let name = DiskEntryFormat.fileName(for: key)
        if names.count >= 4_096 { names.removeAll(keepingCapacity: true) }
        names[key] = name
        return name
    }

    /// Indexes the file `name` as the most recently used entry (replacing what the index held
    /// for it).
    private func record(_ name: String, key: String, length: Int, discardAfter: Date?) {
        forget(name)
        index[name] = Item(key: key, length: length, discardAfter: discardAfter, slot: recency.add(name))
        totalBytes += length
    }

    private func forget(_ name: String) {
        guard let old = index.removeValue(forKey: name) else { return }
        totalBytes -= old.length
        recency.remove(old.slot)
    }

    /// Deletes least recently used entries until the bound holds, never `kept` (the entry just
    /// written, the most recently used).
    private func evict(keeping kept: String?) {
        while totalBytes > maximumBytes, let oldest = recency.leastRecent, oldest != kept {
            DiskFiles.remove(path(oldest))
            forget(oldest)
        }
    }
}
