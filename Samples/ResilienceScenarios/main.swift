// The issue-scale resilience scenarios of issue 29, measured against the loopback server:
// hedging against a server whose p99 is 10× its p50, a circuit breaker in front of an origin
// that fails for 5 s and recovers, and the adaptive limit against a server that slows down above
// 16 calls at once. Prints one line per measurement; BENCHMARKS.md ("Resilience") records them.
//
//   bash scripts/resilience-scenarios.sh [hedging|breaker|limiter|all]
//
// Not a test: the numbers depend on the machine; nothing here asserts.
import Curlew
import CurlewResilience
import Foundation
import LoopbackServer
import Synchronization

struct Numbered: Endpoint {
    typealias Response = String
    var index: Int
    var path: String { "n/\(index)" }
}

/// A seeded generator, so every run draws the same latencies.
final class Draws: Sendable {
    private let state: Mutex<UInt64>
    init(seed: UInt64) { state = Mutex(seed) }
    /// A uniform value in 0..<1 (SplitMix64).
    func next() -> Double {
        state.withLock { state in
            state &+= 0x9E37_79B9_7F4A_7C15
            var z = state
            z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
            z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
            return Double((z ^ (z >> 31)) >> 11) / Double(1 << 53)
        }
    }
}

/// A value behind a lock, shareable by reference.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>
    init(_ value: Value) { mutex = Mutex(value) }
    func withLock<T: Sendable>(_ body: (inout Value) -> T) -> T { mutex.withLock { body(&$0) } }
}

/// Hands out call numbers 1…`count` to the workers.
final class Tickets: Sendable {
    private let issued = Mutex(0)
    let count: Int
    init(count: Int) { self.count = count }
    func take() -> Int? {
        issued.withLock { value -> Int? in
            guard value < count else { return nil }
            value += 1
            return value
        }
    }
}

func milliseconds(_ duration: Duration) -> Double {
    let (seconds, attoseconds) = duration.components
    return Double(seconds) * 1000 + Double(attoseconds) / 1e15
}

/// Nearest-rank percentile of `values` (milliseconds).
func percentile(_ p: Double, _ values: [Double]) -> Double {
    guard !values.isEmpty else { return .nan }
    let sorted = values.sorted()
    return sorted[min(sorted.count - 1, max(0, Int((p * Double(sorted.count)).rounded(.up)) - 1))]
}

func format(_ value: Double) -> String { String(format: "%.2f", value) }

/// Runs `count` calls on `workers` concurrent loops; returns each call's latency (ms) and errors.
func drive(_ client: APIClient, count: Int, workers: Int) async -> (latencies: [Double], errors: Int) {
    let tickets = Tickets(count: count)
    return await withTaskGroup(of: ([Double], Int).self) { group in
        for _ in 0..<workers {
            group.addTask {
                var latencies: [Double] = []
                var errors = 0
                while true {
                    guard let index = tickets.take() else { break }
                    let started = ContinuousClock.now
                    do { _ = try await client.send(Numbered(index: index)) } catch { errors += 1 }
                    latencies.append(milliseconds(.now - started))
                }
                return (latencies, errors)
            }
        }
        var all: [Double] = []
        var errors = 0
        for await (latencies, failed) in group {
            all += latencies
            errors += failed
        }
        return (all, errors)
    }
}

// MARK: - Hedging

/// 98% of answers take 8–12 ms, 2% take 100 ms: p50 ≈ 10 ms, p99 = 100 ms (10×). Each request,
/// hedges included, draws its own latency.
func hedging() async throws {
    let calls = 3000
    let workers = 8
    print("hedging: \(calls) GETs, \(workers) at once; server: 98% 8-12 ms, 2% 100 ms")
    let configurations: [(String, HedgingMiddleware?)] = [
        ("no hedging", nil),
        ("fixed 20 ms", HedgingMiddleware(delay: .milliseconds(20), budget: 0.1, burst: 10)),
        ("observed p95", HedgingMiddleware(delay: .milliseconds(20), percentile: 0.95, budget: 0.1, burst: 10)),
        ("observed p90", HedgingMiddleware(delay: .milliseconds(20), percentile: 0.90, budget: 0.1, burst: 10)),
    ]
    var baseline: Double?
    for (name, middleware) in configurations {
        let draws = Draws(seed: 29)
        let server = try await LoopbackServer.start { request in
            let draw = draws.next()
            let delay: Duration = draw < 0.02 ? .milliseconds(100) : .microseconds(8000 + Int(draws.next() * 4000))
            try? await Task.sleep(for: delay)
            return .text(request.path)
        }
        let transport = CurlTransport()
        let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: middleware.map { [$0] } ?? []), transport: transport)
        let (latencies, errors) = await drive(client, count: calls, workers: workers)
        let p99 = percentile(0.99, latencies)
        if baseline == nil {
            baseline = p99
            // What hedging can do at most within a 10% budget: a hedge goes out only after the
            // p90 (else more than 10% of calls are hedged) and its own answer takes at least the
            // ordinary latency, so a slow call ends no sooner than p90 + an ordinary answer. With
            // a share t of calls slower than 2 × p50 (t ≥ 1%: the p99 is among them), the hedged
            // p99 is p90 + the (1 − 1%/t) quantile of an ordinary answer.
            let p50 = percentile(0.5, latencies)
            let p90 = percentile(0.9, latencies)
            let share = Double(latencies.filter { $0 > 2 * p50 }.count) / Double(latencies.count)
            let answer = percentile(max(0, 1 - 0.01 / share), latencies)
            print(
                "  unhedged: p50 \(format(p50)) ms, p99 \(format(p99)) ms (\(format(p99 / p50))x p50), p90 \(format(p90)) ms; \(format(share * 100))% of calls slower than 2 x p50;"
                    + " best hedged p99 within 10% extra ≈ p90 + \(format(answer)) ms = \(format(p90 + answer)) ms (cut \(format(p99 / (p90 + answer)))x)")
        }
        let extra = Double(server.requestCount - calls) / Double(calls) * 100
        let delay = middleware.map { " hedge delay now \(format(milliseconds($0.hedgeDelay(for: "Numbered")))) ms" } ?? ""
        print(
            "  \(name): p50 \(format(percentile(0.5, latencies))) ms, p95 \(format(percentile(0.95, latencies))) ms, p99 \(format(p99)) ms"
                + " (cut \(format((baseline ?? p99) / p99))x), extra requests \(format(extra))%, errors \(errors);\(delay)")
        await transport.shutdown()
        await server.shutdown()
    }
}

// MARK: - Circuit breaker

/// An origin that answers 503 from t = 1 s to t = 6 s; one call every 2 ms for 8 s through a
/// breaker (ratio 0.5, 20 calls minimum, 2 s window, 1 s break).
func breaker() async throws {
    let failing = Locked(false)
    let server = try await LoopbackServer.start { request in
        failing.withLock { $0 } ? .text("down", status: 503) : .text(request.path)
    }
    let transport = CurlTransport()
    let breakDuration = Duration.seconds(1)
    let breaker = CircuitBreakerMiddleware(policy: .init(failureRatio: 0.5, minimumThroughput: 20, window: .seconds(2), breakDuration: breakDuration))
    let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [breaker]), transport: transport)
    let events = client.events
    let start = ContinuousClock.now
    let transitions = Task {
        var seen: [(Double, ClientEvent.Kind)] = []
        for await event in events where [.circuitOpened, .circuitHalfOpen, .circuitClosed].contains(event.kind) {
            seen.append((milliseconds(event.time - start), event.kind))
        }
        return seen
    }
    print("breaker: one call every 2 ms for 8 s; the origin answers 503 from 1 s to 6 s; break 1 s")
    var refused: [Double] = []
    var sentWhileFailing = 0
    var index = 0
    var recoveredAt: ContinuousClock.Instant?
    while ContinuousClock.now - start < .seconds(8) {
        let elapsed = ContinuousClock.now - start
        let shouldFail = elapsed >= .seconds(1) && elapsed < .seconds(6)
        let changed = failing.withLock { value -> Bool in
            defer { value = shouldFail }
            return value != shouldFail
        }
        if changed, !shouldFail { recoveredAt = .now }
        index += 1
        let before = server.requestCount
        let started = ContinuousClock.now
        do { _ = try await client.send(Numbered(index: index)) } catch let error as CurlewError where error.code == .circuitOpen {
            refused.append(milliseconds(.now - started))
        } catch {}
        if shouldFail, server.requestCount > before { sentWhileFailing += 1 }
        try await Task.sleep(for: .milliseconds(2))
    }
    await transport.shutdown()
    await server.shutdown()
    try await Task.sleep(for: .milliseconds(100))  // the last events reach the reader
    transitions.cancel()
    let seen = await transitions.value
    let opened = seen.first { $0.1 == .circuitOpened }.map(\.0) ?? .nan
    let recovered = recoveredAt.map { milliseconds($0 - start) } ?? .nan
    let closed = seen.last { $0.1 == .circuitClosed }.map(\.0) ?? .nan
    let probes = seen.filter { $0.1 == .circuitHalfOpen }.count
    print("  refused calls: \(refused.count); time to fail fast p50 \(format(percentile(0.5, refused) * 1000)) µs, p99 \(format(percentile(0.99, refused) * 1000)) µs, max \(format((refused.max() ?? .nan) * 1000)) µs")
    print("  opened at \(format(opened)) ms (failures from 1000 ms); requests sent while failing: \(sentWhileFailing), of which probes: \(probes) half-open transitions over \(format((6000 - opened) / 1000)) s")
    print("  recovered at \(format(recovered)) ms, closed at \(format(closed)) ms: \(format(closed - recovered)) ms after recovery (break \(milliseconds(breakDuration)) ms)")
}

// MARK: - Adaptive limit

/// A server that answers in 10 ms up to 16 requests at once and slows in proportion above:
/// 10 ms × in flight / 16. 64 callers; unloaded, then a fixed limit of 64 (no limiter), then the
/// adaptive limiter, AIMD (latency threshold 20 ms), the gradient limit (its defaults) and the
/// gradient limit with Gradient2's averaged baseline; calls over the limit wait in line. The server
/// records its own time per request: what the limiter protects.
func limiter() async throws {
    let inFlight = Locked(0)
    let service = Locked<[Double]>([])
    let server = try await LoopbackServer.start { request in
        let now = inFlight.withLock { value -> Int in
            value += 1
            return value
        }
        let started = ContinuousClock.now
        try? await Task.sleep(for: .microseconds(10_000 * max(16, now) / 16))
        let took = milliseconds(.now - started)
        service.withLock { $0.append(took) }
        inFlight.withLock { $0 -= 1 }
        return .text(request.path)
    }
    func serviceTimes() -> [Double] {
        service.withLock { times in
            defer { times = [] }
            return times
        }
    }
    print("limiter: server 10 ms up to 16 at once, 10 ms × n/16 above; unloaded 1,000 calls by 1 caller, then 64 callers for 4000 calls")
    let transport = CurlTransport()
    let plain = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL), transport: transport)
    let unloaded = await drive(plain, count: 1000, workers: 1).latencies
    let unloadedP99 = percentile(0.99, unloaded)
    let unloadedService = percentile(0.99, serviceTimes())
    print("  unloaded (1 caller): p50 \(format(percentile(0.5, unloaded))) ms, p99 \(format(unloadedP99)) ms; server's own time p99 \(format(unloadedService)) ms")
    let fixed = await drive(plain, count: 4000, workers: 64).latencies
    let fixedService = percentile(0.99, serviceTimes())
    print(
        "  fixed limit 64: callers p50 \(format(percentile(0.5, fixed))) ms, p99 \(format(percentile(0.99, fixed))) ms;"
            + " server's own time p99 \(format(fixedService)) ms (\(format(fixedService / unloadedService))x unloaded)")
    let configurations: [(String, AdaptiveConcurrencyMiddleware.Policy)] = [
        ("AIMD (threshold 20 ms)", .init(initialLimit: 20, maximumLimit: 200, latencyThreshold: .milliseconds(20), maximumWaiting: 64)),
        ("gradient (defaults)", .init(initialLimit: 20, maximumLimit: 200, maximumWaiting: 64)),
        ("gradient, averaged baseline", .init(initialLimit: 20, maximumLimit: 200, algorithm: .gradient(.init(averagedBaselineWindows: 30)), maximumWaiting: 64)),
    ]
    for (name, policy) in configurations {
        let adaptive = AdaptiveConcurrencyMiddleware(policy: policy)
        let limited = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [adaptive]), transport: transport)
        let limits = Locked<[Int]>([])
        let sampler = Task {
            while !Task.isCancelled {
                let limit = adaptive.limit(of: server.baseURL)
                limits.withLock { $0.append(limit) }
                try? await Task.sleep(for: .milliseconds(10))
            }
        }
        // Calls over the limit wait in line (64 places: none is shed).
        let tickets = Tickets(count: 4000)
        let served = await withTaskGroup(of: ([Double], Int).self) { group in
            for _ in 0..<64 {
                group.addTask {
                    var latencies: [Double] = []
                    var shed = 0
                    while true {
                        guard let index = tickets.take() else { break }
                        let started = ContinuousClock.now
                        do {
                            _ = try await limited.send(Numbered(index: index))
                            latencies.append(milliseconds(.now - started))
                        } catch {
                            shed += 1
                        }
                    }
                    return (latencies, shed)
                }
            }
            var all: [Double] = []
            var shed = 0
            for await (latencies, count) in group {
                all += latencies
                shed += count
            }
            return (all, shed)
        }
        sampler.cancel()
        let adaptiveService = percentile(0.99, serviceTimes())
        let samples = limits.withLock { $0 }
        let settled = Array(samples.suffix(max(1, samples.count / 2)))
        let mean = Double(settled.reduce(0, +)) / Double(max(1, settled.count))
        // The limit every 100 ms (every tenth sample), for the timeline.
        let timeline = stride(from: 0, to: samples.count, by: 10).map { String(samples[$0]) }.joined(separator: " ")
        print(
            "  \(name): limit over the second half mean \(format(mean)), min \(settled.min() ?? 0), max \(settled.max() ?? 0); served \(served.0.count), failed \(served.1);"
                + " callers p50 \(format(percentile(0.5, served.0))) ms, p99 \(format(percentile(0.99, served.0))) ms (waiting included);"
                + " server's own time p99 \(format(adaptiveService)) ms (\(format(adaptiveService / unloadedService))x unloaded)")
        print("    limit every 100 ms: \(timeline)")
    }
    await transport.shutdown()
    await server.shutdown()
}

let which = CommandLine.arguments.dropFirst().first ?? "all"
if which == "all" || which == "hedging" { try await hedging() }
if which == "all" || which == "breaker" { try await breaker() }
if which == "all" || which == "limiter" { try await limiter() }
