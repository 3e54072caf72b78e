import Curlew
import CurlewOpenAPI
import Foundation
import OpenAPIRuntime
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The soak's client: the generated client on `CurlewTransport`, its calls, its streams and
/// the process's own CPU time and resident memory.
enum SoakClient {
    /// What one stream received.
    struct StreamResult: Sendable {
        var stream: Int
        var received = 0
        /// Events whose `id` was not the next number.
        var outOfOrder = 0
        /// The count the server's `end` event carried (`nil`: the stream ended without it).
        var endCount: Int?
        /// Events after the `end` event (none expected).
        var afterEnd = 0
        var error: String?
    }

    static func run(arguments: inout Arguments) async throws {
        guard let text = arguments.string("--url"), let serverURL = URL(string: text) else { throw SoakError("run needs --url http://127.0.0.1:PORT") }
        let streams = try arguments.int("--streams", default: 200)
        let duration = try arguments.int("--duration", default: 180)
        let baseline = try arguments.int("--baseline", default: 30)
        let rate = max(1, try arguments.int("--rate", default: 20))

        let transport = CurlTransport()
        let api = APIClient(configuration: ClientConfiguration(baseURL: text), transport: transport)
        var configuration = CurlewTransport.Configuration()
        // The client's default total timeout (60 s) covers a streamed body's reading too: the
        // streams get one longer than the run.
        var streaming = RequestOptions()
        streaming.totalTimeout = .seconds(baseline + duration + 600)
        configuration.operations[Operations.StreamEvents.id] = OperationPolicy(options: streaming)
        let client = Client(serverURL: serverURL, transport: CurlewTransport(client: api, configuration: configuration))
        let memory = MemorySampler()
        let sampler = Task { await memory.sample() }

        print("SSESoak: \(streams) streams, \(duration) s with them open, \(baseline) s without, \(rate) ordinary calls/s, server \(text)")
        // Warm-up: the first calls' set-up is not part of either phase.
        _ = try await calls(client, seconds: 1, rate: rate, firstID: 1_000_000)

        memory.reset()
        let before = Usage.now()
        let quiet = try await calls(client, seconds: baseline, rate: rate, firstID: 1)
        let afterQuiet = Usage.now()
        let quietPeak = memory.peak

        let counters = Counters()
        let clock = ContinuousClock()
        let openStart = clock.now
        var openTime = Duration.zero
        var afterOpen = Usage.now()
        var afterLoaded = afterOpen
        var loaded: [Duration] = []
        var loadedPeak = 0
        var finish = 0
        var results: [StreamResult] = []
        try await withThrowingTaskGroup(of: StreamResult.self) { group in
            for stream in 0..<streams {
                group.addTask { await read(stream: stream, client: client, counters: counters) }
            }
            while counters.opened < streams, clock.now - openStart < .seconds(120) {
                try await Task.sleep(for: .milliseconds(10))
            }
            openTime = clock.now - openStart
            guard counters.opened == streams else {
                throw SoakError("only \(counters.opened) of \(streams) streams opened in \(openTime)")
            }
            print("SSESoak: \(streams) streams open after \(openTime)")
            memory.reset()
            afterOpen = Usage.now()
            let eventsBefore = counters.events
            loaded = try await calls(client, seconds: duration, rate: rate, firstID: 1 + baseline * rate)
            afterLoaded = Usage.now()
            finish = counters.events - eventsBefore
            loadedPeak = memory.peak
            _ = try await client.finishStreams().noContent
            for try await result in group { results.append(result) }
        }
        sampler.cancel()
        let stats = try await client.getStats().ok.body.json
        let sockets = openSockets()
        await transport.shutdown()

        // The report.
        let quietCPU = afterQuiet.cpu - before.cpu
        let loadedCPU = afterLoaded.cpu - afterOpen.cpu
        let loadedWall = afterLoaded.wall - afterOpen.wall
        let quietWall = afterQuiet.wall - before.wall
        print("")
        print("| phase | calls | p50 ms | p99 ms | max ms | client CPU (one core = 100 %) | client peak RSS MiB |")
        print("|---|---:|---:|---:|---:|---:|---:|")
        print(row("no stream open (\(baseline) s)", quiet, cpu: quietCPU, wall: quietWall, peak: quietPeak))
        print(row("\(streams) streams open (\(duration) s)", loaded, cpu: loadedCPU, wall: loadedWall, peak: loadedPeak))
        print("")
        let counts = results.map { $0.received }.sorted()
        let serverSent = stats.sent
        let exact = results.filter { (result: StreamResult) -> Bool in
            guard result.error == nil, result.outOfOrder == 0, result.afterEnd == 0, result.endCount == result.received else { return false }
            return result.stream < serverSent.count && serverSent[result.stream] == result.received
        }
        let failed = results.filter { $0.error != nil }
        print(
            "- streams: \(results.count) read, all \(streams) open after \(milliseconds(openTime)) ms; events per stream min \(counts.first ?? 0), median \(counts.isEmpty ? 0 : counts[counts.count / 2]), max \(counts.last ?? 0); \(counts.reduce(0, +)) events in all, \(finish) while the calls ran (\(Int(Double(finish) / seconds(loadedWall))) events/s)"
        )
        print("- exact (every event the server sent arrived, in order, then the server's `end` with the same count): \(exact.count) of \(streams) streams; failed: \(failed.count); server: \(stats.ended) ended, \(stats.dropped) dropped")
        for result in failed.prefix(5) { print("  - stream \(result.stream): \(result.error ?? "")") }
        print("- client memory: resident \(kib(afterOpen.rss)) MiB after opening, \(kib(afterLoaded.rss)) MiB at the end of the \(duration) s, peak \(kib(loadedPeak)) MiB (with no stream: peak \(kib(quietPeak)) MiB)")
        print(
            "- client CPU: \(String(format: "%.1f", seconds(quietCPU) / seconds(quietWall) * 100)) % of one core with no stream, \(String(format: "%.1f", seconds(loadedCPU) / seconds(loadedWall) * 100)) % with \(streams) streams open (\(String(format: "%.1f", seconds(loadedCPU) * 1e6 / Double(max(finish, 1)))) µs per event, calls included)"
        )
        print("- connections at the end: \(stats.openConnections) open at the server (the client's idle pool), \(stats.connectionsAccepted) accepted over the run; \(sockets) sockets open in the client before shutdown")
        let ok = exact.count == streams && results.count == streams && stats.dropped == 0 && stats.ended == streams
        print(ok ? "SSESoak: all checks passed" : "SSESoak: CHECKS FAILED")
        if !ok { exit(1) }
    }

    /// One stream, read to its end.
    static func read(stream: Int, client: Client, counters: Counters) async -> StreamResult {
        var result = StreamResult(stream: stream)
        do {
            let body = try await client.streamEvents(path: .init(stream: stream)).ok.body.textEventStream
            for try await event in body.asDecodedServerSentEvents() {
                if event.event == "end" {
                    result.endCount = event.data.flatMap { Int($0) }
                    continue
                }
                if result.endCount != nil {
                    result.afterEnd += 1
                    continue
                }
                result.received += 1
                if event.id != String(result.received) { result.outOfOrder += 1 }
                if result.received == 1 { counters.open() }
                counters.event()
            }
            if result.endCount == nil { result.error = "ended without the end event after \(result.received) events" }
        } catch {
            result.error = "\(error)"
        }
        return result
    }

    /// `getItem` calls one at a time, started every `1/rate` s for `seconds` (a call that runs
    /// late delays the next, never skips it); their latencies.
    static func calls(_ client: Client, seconds: Int, rate: Int, firstID: Int) async throws -> [Duration] {
        let clock = ContinuousClock()
        let start = clock.now
        let period = Duration.seconds(1) / rate
        var latencies: [Duration] = []
        latencies.reserveCapacity(seconds * rate)
        for index in 0..<(seconds * rate) {
            try await Task.sleep(until: start + period * index, clock: clock)
            let begin = clock.now
            let id = firstID + index
            let item = try await client.getItem(path: .init(id: id)).ok.body.json
            guard item.id == id else { throw SoakError("getItem(\(id)) answered item \(item.id)") }
            latencies.append(clock.now - begin)
        }
        return latencies
    }

    static func row(_ name: String, _ latencies: [Duration], cpu: Duration, wall: Duration, peak: Int) -> String {
        let sorted = latencies.sorted()
        func at(_ fraction: Double) -> String {
            guard !sorted.isEmpty else { return "-" }
            return String(format: "%.3f", milliseconds(sorted[min(sorted.count - 1, Int(Double(sorted.count) * fraction))]))
        }
        let share = String(format: "%.1f %%", seconds(cpu) / seconds(wall) * 100)
        return "| \(name) | \(sorted.count) | \(at(0.5)) | \(at(0.99)) | \(at(1)) | \(share) | \(kib(peak)) |"
    }

    static func seconds(_ duration: Duration) -> Double {
        Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
    }

    static func milliseconds(_ duration: Duration) -> Double { seconds(duration) * 1000 }

    static func kib(_ value: Int) -> String { String(format: "%.1f", Double(value) / 1024) }

    /// Sockets among this process's file descriptors.
    static func openSockets() -> Int {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return entries.filter { entry in
            ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\(entry)")) ?? "").hasPrefix("socket:")
        }.count
    }
}

/// Streams opened and events received, shared by the stream tasks.
final class Counters: Sendable {
    private let openedCount = Atomic(0)
    private let eventCount = Atomic(0)
    var opened: Int { openedCount.load(ordering: .relaxed) }
    var events: Int { eventCount.load(ordering: .relaxed) }
    func open() { openedCount.add(1, ordering: .relaxed) }
    func event() { eventCount.add(1, ordering: .relaxed) }
}

/// The process's CPU time (user + system, every thread) and resident memory at one moment.
struct Usage {
    var cpu: Duration
    var rss: Int
    var wall: ContinuousClock.Instant

    static func now() -> Usage {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        let cpu = Duration.seconds(Int64(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec)) + .microseconds(Int64(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec))
        return Usage(cpu: cpu, rss: residentKiB(), wall: ContinuousClock.now)
    }

    /// `VmRSS` of /proc/self/status, in KiB.
    static func residentKiB() -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix("VmRSS:") {
            return Int(line.split(separator: " ").dropFirst().first ?? "") ?? 0
        }
        return 0
    }
}

/// The largest resident memory seen since the last reset, sampled every 250 ms (its lock
/// guards the peak).
final class MemorySampler: Sendable {
    private let largest = Mutex(0)

    var peak: Int { largest.withLock { max($0, Usage.residentKiB()) } }

    func reset() { largest.withLock { $0 = Usage.residentKiB() } }

    func sample() async {
        while !Task.isCancelled {
            let now = Usage.residentKiB()
            largest.withLock { $0 = max($0, now) }
            try? await Task.sleep(for: .milliseconds(250))
        }
    }
}
