@testable import Curlew
@testable import CurlewCore
import Foundation
import TestSupport
import Testing
#if canImport(Glibc)
    import Glibc
#endif

/// The disk store under hostile conditions: a writer killed with SIGKILL at random points, 200
/// concurrent writers to one key, and the umask. Process-wide conditions (a kill, the umask) run
/// in a child process: the test binary re-executed with `CURLEW_CACHE_CHILD` set, as the memory
/// measurement in `TransferDispositionTests` does.
@Suite("Disk cache crash safety, concurrency and modes", .serialized, .timeLimit(.minutes(5)))
struct DiskCacheCrashTests {
    static let bigKey = "GET http://127.0.0.1/big"
    static let bigLength = 3 << 20

    /// A body every byte of which depends on its generation, so a mix of two is detectable.
    static func body(generation: Int, length: Int) -> Data {
        var bytes = [UInt8](repeating: 0, count: length)
        let seed = UInt8(truncatingIfNeeded: generation &* 97 &+ 13)
        for index in 0..<length { bytes[index] = UInt8(truncatingIfNeeded: index &* 7) &+ seed }
        return Data(bytes)
    }

    static func entry(generation: Int, length: Int = bigLength) -> CacheEntry {
        CacheEntry(
            key: bigKey, status: 200, headers: [.eTag: String(generation)],
            body: body(generation: generation, length: length), url: "http://127.0.0.1/big",
            requestTime: Date(), storedAt: Date())
    }

    /// Whether an entry's body belongs to the generation its metadata names.
    static func isConsistent(_ entry: CacheEntry) -> Bool {
        guard let generation = entry.headers[.eTag].flatMap(Int.init) else { return false }
        return entry.body == body(generation: generation, length: entry.body.count)
    }

    @Test func aWriterKilledAtRandomPointsLeavesThePreviousCompleteEntry() async throws {
        let environment = ProcessInfo.processInfo.environment
        if environment["CURLEW_CACHE_CHILD"] == "crash", let directory = environment["CURLEW_CACHE_DIR"] {
            // The child: write generation after generation until killed.
            let store = DiskCacheStorage(directory: directory)
            var generation = Int(environment["CURLEW_CACHE_GENERATION"] ?? "1") ?? 1
            while true {
                try await store.store(Self.entry(generation: generation))
                generation += 1
            }
        }
        let directory = makeCacheDirectory("crash")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try await DiskCacheStorage(directory: directory).store(Self.entry(generation: 0))
        var killedMidWrite = 0
        var generationsSeen = Set<Int>()
        for round in 1...50 {
            let child = try Self.launchChild(
                "DiskCacheCrashTests/aWriterKilledAtRandomPointsLeavesThePreviousCompleteEntry",
                environment: ["CURLEW_CACHE_CHILD": "crash", "CURLEW_CACHE_DIR": directory, "CURLEW_CACHE_GENERATION": String(round * 1_000)])
            // Wait until the child is writing, then kill it: at once in odd rounds (so some kills
            // land mid-write however slowly a sanitized child builds its bodies between writes),
            // a random moment later in even ones.
            _ = await eventually(within: 30) { Self.temporaryFiles(directory).count > 0 }
            if round.isMultiple(of: 2) { try await Task.sleep(for: .milliseconds(Int.random(in: 0..<120))) }
            if !Self.temporaryFiles(directory).isEmpty { killedMidWrite += 1 }
            child.kill(SIGKILL)
            #expect(await child.termination().reason == .uncaughtSignal)

            let reopened = DiskCacheStorage(directory: directory)
            let found = await reopened.entry(for: Self.bigKey)
            #expect(found != nil, "round \(round): the previous complete entry survives")
            if let found {
                #expect(Self.isConsistent(found), "round \(round): body and metadata belong together")
                #expect(found.body.count == Self.bigLength)
                generationsSeen.insert(Int(found.headers[.eTag] ?? "") ?? -1)
            }
            #expect(Self.temporaryFiles(directory).isEmpty, "round \(round): stray temporary files are swept on open")
        }
        #expect(killedMidWrite > 0, "some kills landed in the middle of a write")
        #expect(generationsSeen.count > 1, "some rounds completed writes before the kill")
    }

    @Test func twoHundredConcurrentWritersToOneKeyLeaveOneCompleteEntry() async throws {
        let directory = makeCacheDirectory("writers")
        defer { try? FileManager.default.removeItem(atPath: directory) }
        // Four independent stores (four actors, as four processes would be) on one directory.
        let stores = (0..<4).map { _ in DiskCacheStorage(directory: directory) }
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<200 {
                group.addTask { try await stores[writer % 4].store(Self.entry(generation: writer, length: 64 * 1024 + writer)) }
            }
            try await group.waitForAll()
        }
        let names = try FileManager.default.contentsOfDirectory(atPath: directory)
        #expect(names.count == 1, "exactly one file, no temporary leftovers: \(names)")
        let found = try #require(await DiskCacheStorage(directory: directory).entry(for: Self.bigKey))
        let writer = try #require(found.headers[.eTag].flatMap(Int.init))
        #expect(found.body.count == 64 * 1024 + writer)
        #expect(Self.isConsistent(found))
    }

    @Test func modesAre0700And0600WhateverTheUmask() async throws {
        let environment = ProcessInfo.processInfo.environment
        if environment["CURLEW_CACHE_CHILD"] == "umask", let directory = environment["CURLEW_CACHE_DIR"] {
            umask(0)
            try await DiskCacheStorage(directory: directory + "/open").store(Self.entry(generation: 1, length: 10))
            umask(0o277)
            try await DiskCacheStorage(directory: directory + "/closed").store(Self.entry(generation: 2, length: 10))
            return
        }
        let parent = makeCacheDirectory("modes")
        defer { try? FileManager.default.removeItem(atPath: parent) }
        try FileManager.default.createDirectory(atPath: parent, withIntermediateDirectories: true)
        let child = try Self.launchChild(
            "DiskCacheCrashTests/modesAre0700And0600WhateverTheUmask", environment: ["CURLEW_CACHE_CHILD": "umask", "CURLEW_CACHE_DIR": parent])
        #expect(await child.terminationStatus() == 0)
        for name in ["open", "closed"] {
            let directory = parent + "/" + name
            #expect(try Self.mode(directory) == 0o700, "\(name) directory")
            let files = try FileManager.default.contentsOfDirectory(atPath: directory)
            #expect(files.count == 1)
            for file in files { #expect(try Self.mode(directory + "/" + file) == 0o600, "\(name) file") }
        }
    }

    // MARK: Helpers

    static func mode(_ path: String) throws -> Int {
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    static func temporaryFiles(_ directory: String) -> [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []).filter { $0.hasPrefix(".tmp-") }
    }

    /// Runs the test binary again with only `filter` and extra environment; output discarded.
    /// posix_spawn, not Foundation's Process (see SpawnedProcess).
    static func launchChild(_ filter: String, environment extra: [String: String]) throws -> SpawnedProcess {
        try SpawnedProcess(
            path: "/proc/self/exe", arguments: ["--testing-library", "swift-testing", "--filter", filter],
            environment: ProcessInfo.processInfo.environment.merging(extra) { $1 })
    }
}
