@testable import Curlew
import Foundation
import LoopbackServer
import Synchronization
import TestSupport
import Testing
#if canImport(Glibc)
    import Glibc
#endif

/// Memory given back after a burst (issue 31, item 5): in a child process of its own, so no other
/// test's allocations move its resident set.
@Suite("Idle memory", .serialized, .timeLimit(.minutes(3)))
struct IdleMemoryTests {
    /// The resident set in bytes (`/proc/self/statm`, second field, in pages).
    static func residentBytes() -> Int {
        guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
        let fields = text.split(separator: " ")
        guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    /// Not under a sanitizer (`ASAN_OPTIONS` or `TSAN_OPTIONS`, set by `scripts/sanitize.sh`):
    /// AddressSanitizer's allocator keeps freed memory in quarantine and never hands it back, and
    /// ThreadSanitizer's shadow memory grows with every address touched, so the resident set
    /// cannot return there whatever the engine frees.
    @Test(
        .disabled(
            if: ["ASAN_OPTIONS", "TSAN_OPTIONS"].contains { ProcessInfo.processInfo.environment[$0] != nil },
            "a sanitizer's allocator or shadow memory keeps the resident set up"))
    func residentMemoryReturnsNearItsStartAfterTheIdleTimeout() async throws {
        let environment = ProcessInfo.processInfo.environment
        if let url = environment["CURLEW_IDLE_MEMORY_URL"], let output = environment["CURLEW_IDLE_MEMORY_OUT"] {
            // The child: a burst of 256 concurrent calls, then quiet until the engine gave
            // everything back.
            let transport = CurlTransport(configuration: .init(engineCount: 2, idleConnectionTimeout: .seconds(2)))
            let client = APIClient(baseURL: url, transport: transport)
            _ = try await client.send(Numbered(index: 0))
            let start = Self.residentBytes()
            try await withThrowingTaskGroup(of: Void.self) { group in
                for index in 0..<256 { group.addTask { _ = try await client.send(Numbered(index: index)) } }
                try await group.waitForAll()
            }
            let peak = Self.residentBytes()
            let opened = transport.statistics.connectionsOpened
            _ = await eventually(within: 30) {
                transport.statistics.openConnections == 0 && transport.engines.engines.allSatisfy { $0.pooledHandles == 0 }
            }
            // One more second for the engine's turn after the trim.
            try await Task.sleep(for: .seconds(1))
            let after = Self.residentBytes()
            let line = "\(start) \(peak) \(after) \(opened) \(transport.statistics.openConnections)"
            try line.write(toFile: output, atomically: true, encoding: .utf8)
            await transport.shutdown()
            return
        }
        // Each call of the burst is held until all 256 have arrived (at most 10 s), so each needs
        // a connection of its own: a fixed delay let early calls finish and their connections
        // serve later ones on a loaded machine (157 opened in a CI run).
        let arrived = Mutex(0)
        let server = try await LoopbackServer.start { request in
            let count = arrived.withLock { count in
                count += 1
                return count
            }
            if count > 1 {
                let deadline = ContinuousClock.now + .seconds(10)
                while arrived.withLock({ $0 }) < 257, ContinuousClock.now < deadline, !request.connection.isClosed {
                    try? await Task.sleep(for: .milliseconds(5))
                }
            }
            return .text(String(repeating: "x", count: 16 * 1024))
        }
        let output = NSTemporaryDirectory() + "curlew-idle-memory-\(getpid()).txt"
        defer { try? FileManager.default.removeItem(atPath: output) }
        let child = try SpawnedProcess(
            path: "/proc/self/exe",
            arguments: ["--testing-library", "swift-testing", "--filter", "IdleMemoryTests/residentMemoryReturnsNearItsStartAfterTheIdleTimeout"],
            environment: environment.merging(["CURLEW_IDLE_MEMORY_URL": server.baseURL, "CURLEW_IDLE_MEMORY_OUT": output]) { $1 })
        let ended = await child.termination()
        #expect(ended.reason == .exit && ended.status == 0)
        await server.shutdown()
        let text = try String(contentsOfFile: output, encoding: .utf8)
        let numbers = text.split(separator: " ").compactMap { Int($0) }
        try #require(numbers.count == 5)
        let (start, peak, after, opened, open) = (numbers[0], numbers[1], numbers[2], numbers[3], numbers[4])
        print("idle memory: start \(start / 1024) KiB, after the burst \(peak / 1024) KiB, after the idle timeout \(after / 1024) KiB; \(opened) connections opened, \(open) open")
        #expect(opened >= 200, "the burst needed a connection per call")
        #expect(open == 0)
        #expect(after - start < 10 * 1024 * 1024, "within 10 MiB of the start after the idle timeout")
    }
}
