@testable import Curlew
@testable import CurlewResilience
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// The gradient limit as a value, driven call by call with measured latencies: no clock, no
/// sleeping. Every limit is checked against the formula's exact value.
@Suite("Gradient concurrency limit")
struct GradientLimitTests {
    typealias Gradient = AdaptiveConcurrencyMiddleware.Policy.Gradient

    /// Probes of 3 calls at 2 at once, windows of at least 4 calls, no smoothing (each window's
    /// value is taken whole).
    static let options = Gradient(percentile: 0.5, smoothing: 1, probeConcurrency: 2, probeSamples: 3, probeInterval: 1000, minimumWindow: 4)

    static func limit(_ options: Gradient = options, initial: Int = 16, minimum: Int = 1, maximum: Int = 100) -> GradientLimit {
        GradientLimit(options: options, initialLimit: initial, minimumLimit: minimum, maximumLimit: maximum)
    }

    /// Ends `count` calls of `milliseconds` each.
    static func feed(_ limit: inout GradientLimit, _ count: Int, milliseconds: Int, busy: Bool = true, dropped: Bool = false) {
        for _ in 0..<count { limit.record(latency: .milliseconds(milliseconds), dropped: dropped, busy: busy, generation: limit.generation) }
    }

    static func close(_ value: Double, _ expected: Double) -> Bool { abs(value - expected) < 1e-9 }

    /// A probe never runs below the minimum limit: with a minimum of 10 and probes of 2, the
    /// probe lets 10 calls go at once.
    @Test func aProbeNeverRunsBelowTheMinimumLimit() {
        let limit = Self.limit(minimum: 10)
        #expect(limit.probing)
        #expect(limit.capacity == 10)
    }

    @Test func theFirstProbeMeasuresTheBaselineAtLowConcurrency() {
        var limit = Self.limit()
        #expect(limit.probing)
        #expect(limit.capacity == 2)
        #expect(limit.baseline == nil)
        limit.record(latency: .milliseconds(10), dropped: false, busy: true, generation: 0)
        limit.record(latency: .milliseconds(12), dropped: false, busy: true, generation: 0)
        #expect(limit.probing)
        limit.record(latency: .milliseconds(11), dropped: false, busy: true, generation: 0)
        // The median of 10, 12 and 11 ms; the limit is back to where it started.
        #expect(!limit.probing)
        #expect(limit.baseline == .milliseconds(11))
        #expect(limit.capacity == 16)
        #expect(limit.window.count == 0 && limit.window.size == 16)
    }

    @Test func eachWindowMovesTheLimitByItsGradientPlusTheSquareRoot() {
        var limit = Self.limit()
        Self.feed(&limit, 3, milliseconds: 11)
        // A window (16 calls) at the baseline: gradient 1, the limit grows by √16.
        Self.feed(&limit, 15, milliseconds: 11)
        #expect(limit.limit == 16)
        Self.feed(&limit, 1, milliseconds: 11)
        #expect(limit.limit == 20)
        #expect(limit.capacity == 20)
        // A window (now 20 calls) at twice the baseline: gradient 0.5, 20 × 0.5 + √20.
        Self.feed(&limit, 20, milliseconds: 22)
        let halved = 20 * 0.5 + 20.0.squareRoot()
        #expect(Self.close(limit.limit, halved))
        #expect(limit.capacity == 14)
        // A window at 1.1 × the baseline: gradient 11/12.1.
        let size = limit.window.size
        #expect(size == 14)
        for _ in 0..<size { limit.record(latency: .microseconds(12_100), dropped: false, busy: true, generation: limit.generation) }
        let slower = halved * (11.0 / 12.1) + halved.squareRoot()
        #expect(Self.close(limit.limit, slower))
        #expect(limit.capacity == Int(slower))
    }

    @Test func theGradientIsClampedAndTheLimitBounded() {
        var limit = Self.limit(maximum: 30)
        Self.feed(&limit, 3, milliseconds: 10)
        // Twice as fast as the baseline: gradient clamped to 2, 16 × 2 + 4 = 36, bounded to 30.
        Self.feed(&limit, 16, milliseconds: 5)
        #expect(limit.limit == 30)
        // Ten times slower: gradient clamped to 0.5, 30 × 0.5 + √30.
        Self.feed(&limit, 30, milliseconds: 100)
        #expect(Self.close(limit.limit, 15 + 30.0.squareRoot()))
    }

    @Test func aDroppedCallHalvesTheWindowsGradientAndAnIdleOriginDoesNotRaiseTheLimit() {
        var limit = Self.limit()
        Self.feed(&limit, 3, milliseconds: 10)
        // Fast, but never busy: the limit would rise to 20; it stays.
        Self.feed(&limit, 16, milliseconds: 10, busy: false)
        #expect(limit.limit == 16)
        // Fast, but one call of the window was dropped: gradient 0.5, 16 × 0.5 + 4 = 12.
        Self.feed(&limit, 15, milliseconds: 10)
        Self.feed(&limit, 1, milliseconds: 10, dropped: true)
        #expect(limit.limit == 12)
        // Idle and slow: the limit still falls (12 × 0.5 + √12).
        Self.feed(&limit, 12, milliseconds: 40, busy: false)
        #expect(Self.close(limit.limit, 6 + 12.0.squareRoot()))
    }

    @Test func smoothingTakesOnlyPartOfEachStep() {
        var limit = Self.limit(Gradient(smoothing: 0.5, probeConcurrency: 2, probeSamples: 3, minimumWindow: 4))
        Self.feed(&limit, 3, milliseconds: 10)
        // Gradient 1: the target is 20, half-way there is 18.
        Self.feed(&limit, 16, milliseconds: 10)
        #expect(limit.limit == 18)
        // Gradient 0.5: the target is 9 + √18; half-way from 18.
        Self.feed(&limit, 18, milliseconds: 20)
        #expect(Self.close(limit.limit, 18 * 0.5 + (18 * 0.5 + 18.0.squareRoot()) * 0.5))
    }

    @Test func aProbeCountsOnlyCallsThatStartedDuringIt() {
        var limit = Self.limit(Gradient(smoothing: 1, probeConcurrency: 2, probeSamples: 3, probeInterval: 20, minimumWindow: 4))
        Self.feed(&limit, 3, milliseconds: 10)
        #expect(limit.generation == 0)
        // 20 calls after the probe: one window of 16 (limit 20), then 4 more and a new probe.
        Self.feed(&limit, 16, milliseconds: 10)
        #expect(limit.limit == 20)
        Self.feed(&limit, 3, milliseconds: 10)
        #expect(!limit.probing)
        Self.feed(&limit, 1, milliseconds: 10)
        #expect(limit.probing)
        #expect(limit.generation == 1)
        #expect(limit.capacity == 2)
        // Calls that started before the probe, at the old concurrency, are not its samples, nor
        // are dropped ones.
        for _ in 0..<5 { limit.record(latency: .milliseconds(50), dropped: false, busy: true, generation: 0) }
        limit.record(latency: .milliseconds(1), dropped: true, busy: true, generation: 1)
        #expect(limit.probing)
        limit.record(latency: .milliseconds(30), dropped: false, busy: true, generation: 1)
        limit.record(latency: .milliseconds(20), dropped: false, busy: true, generation: 1)
        limit.record(latency: .milliseconds(25), dropped: false, busy: true, generation: 1)
        #expect(!limit.probing)
        #expect(limit.baseline == .milliseconds(25))
        // The limit between probes is kept.
        #expect(limit.capacity == 20)
    }

    @Test func fiveWindowsAtTheMinimumStartAProbe() {
        var limit = Self.limit(initial: 4, minimum: 4)
        Self.feed(&limit, 3, milliseconds: 10)
        for window in 1...5 {
            #expect(!limit.probing)
            // Four times the baseline: gradient 0.5, 4 × 0.5 + 2 = 4, the minimum.
            Self.feed(&limit, 4, milliseconds: 40)
            #expect(limit.limit == 4, "window \(window)")
        }
        #expect(limit.probing)
        #expect(limit.generation == 1)
        // The origin is slower for good: the new baseline is 40 ms, and at 40 ms the limit grows.
        Self.feed(&limit, 3, milliseconds: 40)
        #expect(limit.baseline == .milliseconds(40))
        Self.feed(&limit, 4, milliseconds: 40)
        #expect(limit.limit == 6)
    }

    /// Gradient2's baseline: an exponential average of the windows' latencies, no probe. Over
    /// windows of 4 calls with `windows: 3` (each window moves the average half-way).
    @Test func anAveragedBaselineFollowsTheWindowsAndNeverProbes() {
        var limit = Self.limit(Gradient(smoothing: 1, minimumWindow: 4, averagedBaselineWindows: 3), initial: 4)
        #expect(!limit.probing)
        #expect(limit.capacity == 4)
        // The first window starts the average at 10 ms: gradient 1, 4 + 2 = 6.
        Self.feed(&limit, 4, milliseconds: 10)
        #expect(limit.baseline == .milliseconds(10))
        #expect(limit.limit == 6)
        // A window at 20 ms moves the average to 15 ms: gradient 0.75, 6 × 0.75 + √6.
        Self.feed(&limit, 6, milliseconds: 20)
        #expect(limit.baseline == .milliseconds(15))
        let slowed = 6 * 0.75 + 6.0.squareRoot()
        #expect(Self.close(limit.limit, slowed))
        // A window at 4 ms moves the average to 9.5 ms, more than twice the window's, so it is
        // cut by a tenth: 8.55 ms. Faster than the baseline: the gradient is clamped to 1 (not 2).
        Self.feed(&limit, limit.window.size, milliseconds: 4)
        #expect(limit.baseline == .microseconds(8550))
        #expect(Self.close(limit.limit, slowed + slowed.squareRoot()))
        // Windows at its minimum start no probe.
        #expect(!limit.probing)
        #expect(limit.generation == 0)
    }

    /// The middleware's slots under the gradient: the probe's concurrency first, then the limit;
    /// a call's generation comes back with its release.
    @Test func theAdaptiveLimitPinsSlotsDuringAProbe() {
        let policy = AdaptiveConcurrencyMiddleware.Policy(
            initialLimit: 6, maximumLimit: 10, algorithm: .gradient(Gradient(smoothing: 1, probeConcurrency: 2, probeSamples: 2, minimumWindow: 4)))
        var limit = AdaptiveLimit(policy: policy)
        #expect([limit.acquire(), limit.acquire(), limit.acquire()] == [true, true, false])
        // The probe holds back four of the limit's six slots.
        #expect(limit.heldBack == 4)
        limit.release(latency: .milliseconds(10), dropped: false, generation: 0)
        limit.release(latency: .milliseconds(10), dropped: false, generation: 0)
        #expect(limit.gradient?.baseline == .milliseconds(10))
        #expect(limit.capacity == 6)
        #expect(limit.heldBack == 0)
        var taken = 0
        while limit.acquire() { taken += 1 }
        #expect(taken == 6)
        // Six calls end at the baseline with the origin busy: one window of six, 6 + √6.
        for _ in 0..<6 { limit.release(latency: .milliseconds(10), dropped: false) }
        #expect(limit.inFlight == 0)
        #expect(Self.close(limit.limit, 6 + 6.0.squareRoot()))
        #expect(limit.capacity == 8)
        // Cancelled calls give their slot back and move nothing.
        _ = limit.acquire()
        limit.release(latency: nil, dropped: false)
        #expect(limit.gradient?.window.count == 0)
    }

    @Test func theDefaultPolicyIsTheGradientAndAThresholdChoosesAIMD() {
        #expect(AdaptiveConcurrencyMiddleware.Policy().algorithm == .gradient(Gradient()))
        #expect(AdaptiveConcurrencyMiddleware.Policy(latencyThreshold: .milliseconds(250)).algorithm == .aimd(latencyThreshold: .milliseconds(250), backoff: 0.9))
        #expect(AdaptiveLimit(policy: .init(latencyThreshold: .seconds(1))).gradient == nil)
    }

    /// Against a real server: six calls at once to a new origin go at most two at a time while
    /// the probe measures it, and all are answered: with no place in line (`maximumWaiting` 0),
    /// the four the limit of 10 would let through wait for the probe rather than being shed.
    @Test func aNewOriginIsProbedAtLowConcurrency() async throws {
        try await withLoopback(handler: { request in
            try? await Task.sleep(for: .milliseconds(20))
            return .text(request.path)
        }) { server, _, transport in
            let limiter = AdaptiveConcurrencyMiddleware(
                policy: .init(initialLimit: 10, algorithm: .gradient(Gradient(probeConcurrency: 2, probeSamples: 6))))
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [limiter]), transport: transport)
            #expect(limiter.limit(of: server.baseURL) == 10)
            let answers = try await withThrowingTaskGroup(of: String.self) { group in
                for index in 0..<6 { group.addTask { try await client.send(Numbered(index: index)) } }
                var all: [String] = []
                for try await answer in group { all.append(answer) }
                return all.sorted()
            }
            #expect(answers == (0..<6).map { "/n/\($0)" })
            #expect(server.requestCount == 6)
            #expect(server.peakOpenConnections <= 2)
            // The probe has ended: the limit is 10 again.
            #expect(limiter.limit(of: server.baseURL) == 10)
        }
    }

    /// While a probe holds a limit of 4 down to 2, the two calls the limit would let through wait
    /// for it; a fifth, beyond the limit with no place in line, is shed and never sent.
    @Test func aProbeShedsOnlyWhatTheLimitWould() async throws {
        let gate = Mutex(false)
        try await withLoopback(handler: { request in
            while !gate.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(5)) }
            return .text(request.path)
        }) { server, _, transport in
            let limiter = AdaptiveConcurrencyMiddleware(policy: .init(initialLimit: 4, algorithm: .gradient(Gradient(probeConcurrency: 2, probeSamples: 10))))
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [limiter]), transport: transport)
            let calls = (1...4).map { index in Task { try await client.send(Numbered(index: index)) } }
            await waitForRequests(server, count: 2)
            #expect(await eventually { limiter.waiting(at: server.baseURL) == 2 })
            let shed = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 5)) }
            #expect(shed?.code == .concurrencyLimitExceeded)
            gate.withLock { $0 = true }
            var answers: [String] = []
            for call in calls { answers.append(try await call.value) }
            #expect(answers == ["/n/1", "/n/2", "/n/3", "/n/4"])
            #expect(server.requestCount == 4)
            #expect(server.peakOpenConnections <= 2)
            #expect(!server.requests.map(\.uri).contains("/n/5"))
        }
    }
}
