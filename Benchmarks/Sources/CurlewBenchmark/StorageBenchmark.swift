import Curlew
import Foundation

/// The cache storage benchmark: writes into a full store, each evicting the least recently used
/// entry. No network: the cost of ``MemoryCacheStorage`` or ``DiskCacheStorage`` bookkeeping as
/// the store grows.
///
/// ```
/// CurlewBenchmark storage --store memory --entries 10000 --requests 2000
/// ```
///
/// Fills a store bounded to `--entries` entries of 1 KiB, then writes `--requests` new entries
/// (each evicting one) and prints one Markdown row: store, entries, writes, microseconds per
/// write. Under `instructions-per-request` (`--requests N` and `3N`) the difference is the
/// instructions of one write into a full store.
enum StorageBenchmark {
    enum Store: String, CaseIterable {
        case memory, disk
    }

    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    static func run(arguments: [String]) async throws {
        var store = Store.memory
        var entries = 10_000
        var writes = 2_000
        var remaining = arguments[...]
        while let flag = remaining.popFirst() {
            guard let value = remaining.popFirst() else { throw Failure(description: "\(flag) needs a value") }
            switch flag {
            case "--store":
                guard let parsed = Store(rawValue: value) else { throw Failure(description: "unknown store \(value); memory or disk") }
                store = parsed
            case "--entries": entries = max(1, Int(value) ?? entries)
            case "--requests": writes = max(1, Int(value) ?? writes)
            default: throw Failure(description: "unknown option \(flag)")
            }
        }
        let body = Data(repeating: 0x61, count: 1_024)
        func entry(_ number: Int) -> CacheEntry {
            CacheEntry(
                key: "v1|anonymous|GET http://127.0.0.1:18089/items/\(number)", status: 200, headers: [.contentType: "application/json"],
                body: body, url: "http://127.0.0.1:18089/items/\(number)", requestTime: Date(), storedAt: Date())
        }
        let write: (CacheEntry) async throws -> Void
        var cleanup = {}
        switch store {
        case .memory:
            let memory = MemoryCacheStorage(maximumBytes: entry(0).size * entries)
            write = { await memory.store($0) }
        case .disk:
            let directory = NSTemporaryDirectory() + "curlew-storage-benchmark-\(getpid())"
            // One entry's file size, from a store that holds only it.
            let probe = DiskCacheStorage(directory: directory + "-probe")
            try await probe.store(entry(0))
            let fileSize = await probe.totalBytes
            try? FileManager.default.removeItem(atPath: directory + "-probe")
            let disk = DiskCacheStorage(directory: directory, maximumBytes: fileSize * entries)
            write = { try await disk.store($0) }
            cleanup = { try? FileManager.default.removeItem(atPath: directory) }
        }
        defer { cleanup() }
        for number in 0..<entries { try await write(entry(number)) }
        let start = ContinuousClock.now
        for number in entries..<(entries + writes) { try await write(entry(number)) }
        let elapsed = ContinuousClock.now - start
        let microseconds = Double(elapsed.components.seconds) * 1e6 + Double(elapsed.components.attoseconds) / 1e12
        print("| \(store.rawValue) | \(entries) | \(writes) | \(String(format: "%.1f", microseconds / Double(writes))) |")
    }
}
