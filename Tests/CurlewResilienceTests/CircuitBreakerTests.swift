@testable import Curlew
@testable import CurlewResilience
import Foundation
import HTTPTypes
import LoopbackServer
import MetricsTestKit
import Synchronization
import Testing
import TestSupport

/// A clock a test moves by hand.
final class TestClock: Sendable {
    /// The current instant, guarded by the mutex.
    private let instant = Mutex(ContinuousClock.now)

    var now: ContinuousClock.Instant { instant.withLock { $0 } }

    func advance(by duration: Duration) {
        instant.withLock { $0 += duration }
    }
}

@Suite("Circuit breaker")
struct CircuitBreakerTests {
    static let policy = CircuitBreakerMiddleware.Policy(failureRatio: 0.5, minimumThroughput: 4, window: .seconds(10), breakDuration: .seconds(5))

    /// Lets a call through at `now` and records `outcome` for it.
    static func call(_ breaker: inout CircuitBreaker, _ outcome: CircuitBreaker.Outcome, at now: ContinuousClock.Instant) -> CircuitBreakerMiddleware.State? {
        let admission = breaker.admit(at: now)
        return breaker.record(outcome, of: admission, at: now)
    }

    @Test func itOpensOnlyWithTheMinimumThroughputAndTheRatio() {
        let start = ContinuousClock.now
        var breaker = CircuitBreaker(policy: Self.policy)
        #expect(Self.call(&breaker, .failure, at: start) == nil)
        #expect(Self.call(&breaker, .failure, at: start) == nil)
        #expect(Self.call(&breaker, .failure, at: start) == nil)  // three failures: below the minimum of four
        #expect(breaker.state == .closed)
        #expect(Self.call(&breaker, .success, at: start) == .open)  // 3 of 4 ≥ 0.5
        #expect(breaker.admit(at: start + .seconds(1)) == .refused(retryAfter: .seconds(4)))
    }

    @Test func successesKeepItClosedAndOldOutcomesLeaveTheWindow() {
        let start = ContinuousClock.now
        var breaker = CircuitBreaker(policy: Self.policy)
        for _ in 0..<3 { _ = Self.call(&breaker, .success, at: start) }
        _ = Self.call(&breaker, .failure, at: start)
        _ = Self.call(&breaker, .failure, at: start)
        #expect(breaker.state == .closed)  // 2 of 5 < 0.5
        // Eleven seconds later the window (10 s) holds none of them: three failures are too few.
        let later = start + .seconds(11)
        for _ in 0..<3 { #expect(Self.call(&breaker, .failure, at: later) == nil) }
        #expect(breaker.counts(at: later) == (failures: 3, total: 3))
        #expect(Self.call(&breaker, .failure, at: later) == .open)
    }

    @Test func ignoredOutcomesNeverCount() {
        let start = ContinuousClock.now
        var breaker = CircuitBreaker(policy: Self.policy)
        for _ in 0..<10 { #expect(Self.call(&breaker, .ignored, at: start) == nil) }
        #expect(breaker.counts(at: start) == (failures: 0, total: 0))
        #expect(breaker.state == .closed)
    }

    @Test func halfOpenLetsOneProbeThroughAndItsOutcomeDecides() {
        let start = ContinuousClock.now
        var breaker = CircuitBreaker(policy: Self.policy)
        for _ in 0..<4 { _ = Self.call(&breaker, .failure, at: start) }
        #expect(breaker.state == .open)
        let afterBreak = start + .seconds(5)
        let probe = breaker.admit(at: afterBreak)
        #expect(probe == .probe)
        #expect(breaker.state == .halfOpen)
        #expect(breaker.admit(at: afterBreak) == .refused(retryAfter: .zero))  // one probe at a time
        // A cancelled probe says nothing: the next call probes.
        #expect(breaker.record(.ignored, of: probe, at: afterBreak) == nil)
        let second = breaker.admit(at: afterBreak)
        #expect(second == .probe)
        #expect(breaker.record(.failure, of: second, at: afterBreak) == .open)
        #expect(breaker.admit(at: afterBreak + .seconds(4)) == .refused(retryAfter: .seconds(1)))
        let third = breaker.admit(at: afterBreak + .seconds(5))
        #expect(third == .probe)
        #expect(breaker.record(.success, of: third, at: afterBreak + .seconds(5)) == .closed)
        #expect(breaker.counts(at: afterBreak + .seconds(5)) == (failures: 0, total: 0))
        #expect(breaker.admit(at: afterBreak + .seconds(5)) == .allowed)
    }

    @Test func aLateOutcomeOfACallLetThroughBeforeItOpenedChangesNothing() {
        let start = ContinuousClock.now
        var breaker = CircuitBreaker(policy: Self.policy)
        let early = breaker.admit(at: start)
        for _ in 0..<4 { _ = Self.call(&breaker, .failure, at: start) }
        #expect(breaker.record(.success, of: early, at: start) == nil)
        #expect(breaker.state == .open)
    }

    @Test func whatCounts() {
        func outcome(_ code: CurlewError.Code, status: Int? = nil) -> CircuitBreaker.Outcome {
            CircuitBreakerMiddleware.outcome(of: CurlewError(code: code, message: "", status: status.map { HTTPResponse.Status(code: $0) }))
        }
        #expect(outcome(.cannotConnect) == .failure)
        #expect(outcome(.connectTimeout) == .failure)
        #expect(outcome(.totalTimeout) == .failure)
        #expect(outcome(.idleTimeout) == .failure)
        #expect(outcome(.connectionReset) == .failure)
        #expect(outcome(.unacceptableStatus, status: 503) == .failure)
        #expect(outcome(.unacceptableStatus, status: 404) == .success)
        #expect(outcome(.unacceptableStatus, status: 429) == .success)
        #expect(outcome(.cancelled) == .ignored)
        #expect(outcome(.deadlineExceeded) == .ignored)
        #expect(CircuitBreakerMiddleware.outcome(of: CancellationError()) == .ignored)
    }

    /// An origin that fails with 503 until told to recover: the breaker opens after four
    /// failures, refuses calls without sending while open, lets one probe through per break, and
    /// closes on the first successful probe. The server's request count is exact at every step;
    /// each transition is an event and a value of the `curlew_circuit_state` gauge.
    @Test func anOriginThatFailsThenRecovers() async throws {
        let failing = Mutex(true)
        let metrics = TestMetrics()
        try await withLoopback(handler: { request in
            failing.withLock { $0 } ? .text("down", status: 503) : .text(request.path)
        }) { server, _, transport in
            let clock = TestClock()
            let breaker = CircuitBreakerMiddleware(policy: Self.policy, now: { clock.now })
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [breaker]), transport: transport)
            let events = client.events
            let transitions = Task { await collectEvents(events, until: 1, of: .circuitClosed) }
            func send(_ index: Int) async -> CurlewError? {
                do {
                    _ = try await client.send(Numbered(index: index)) { $0.instrumentation = CurlewInstrumentation(metricsFactory: metrics) }
                    return nil
                } catch {
                    return error as? CurlewError
                }
            }
            for index in 0..<4 { #expect(await send(index)?.status?.code == 503) }
            #expect(server.requestCount == 4)
            #expect(breaker.state(of: server.baseURL) == .open)
            for index in 4..<7 {
                let refused = await send(index)
                #expect(refused?.code == .circuitOpen)
                #expect(refused?.stage == .middleware(.circuitBreaker))
            }
            #expect(server.requestCount == 4)
            // A break later one probe goes out and fails: open again.
            clock.advance(by: .seconds(5))
            #expect(await send(7)?.status?.code == 503)
            #expect(await send(8)?.code == .circuitOpen)
            #expect(server.requestCount == 5)
            // The origin recovers; the next probe closes the breaker and calls flow again.
            failing.withLock { $0 = false }
            clock.advance(by: .seconds(5))
            #expect(await send(9) == nil)
            #expect(breaker.state(of: server.baseURL) == .closed)
            #expect(await send(10) == nil)
            #expect(await send(11) == nil)
            #expect(server.requests.map(\.uri) == ["/n/0", "/n/1", "/n/2", "/n/3", "/n/7", "/n/9", "/n/10", "/n/11"])
            let seen = await transitions.value.filter { [.circuitOpened, .circuitHalfOpen, .circuitClosed].contains($0.kind) }
            #expect(seen.map(\.kind) == [.circuitOpened, .circuitHalfOpen, .circuitOpened, .circuitHalfOpen, .circuitClosed])
            #expect(Set(seen.compactMap(\.origin)) == [TrustedOrigins.origin(of: server.baseURL)])
            let origin = try #require(TrustedOrigins.origin(of: server.baseURL))
            #expect(try metrics.expectGauge("curlew_circuit_state", [("origin", origin)]).values == [2, 1, 2, 1, 0])
            #expect(metrics.counterTotal(label: "curlew_circuit_opened_total", dimensions: [("request", "Numbered")]) == 2)
        }
    }

    /// A streamed body that the origin cuts off in mid-body is a failure, counted when the body
    /// ends (its head said 200); one read to its end is a success.
    @Test func aStreamedBodyCutOffCountsAsAFailure() async throws {
        try await withLoopback(handler: { request in
            .stream(headers: [("Content-Length", "100")]) { writer in
                try await writer.write(Array(repeating: 1, count: request.path == "/n/1" ? 100 : 10))
                if request.path != "/n/1" { throw CancellationError() }
            }
        }) { server, _, transport in
            let policy = CircuitBreakerMiddleware.Policy(failureRatio: 0.5, minimumThroughput: 2, breakDuration: .seconds(600))
            let breaker = CircuitBreakerMiddleware(policy: policy)
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [breaker]), transport: transport)
            let whole = try await client.stream(Numbered(index: 1)).value.collect(upTo: 1 << 10)
            #expect(whole.count == 100)
            let cut = try await client.stream(Numbered(index: 2))
            #expect(cut.status == .ok)
            let failed = await #expect(throws: CurlewError.self) { _ = try await cut.value.collect(upTo: 1 << 10) }
            #expect(failed?.code == .connectionReset)
            #expect(breaker.state(of: server.baseURL) == .open)
            let refused = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 3)) }
            #expect(refused?.code == .circuitOpen)
            #expect(server.requests.map(\.uri) == ["/n/1", "/n/2"])
        }
    }

    /// A streamed body the caller's deadline cuts off (the attempt's total timeout is the time
    /// the deadline left) says nothing about the origin: two such calls leave the breaker closed.
    @Test func aStreamedBodyTheCallersDeadlineCutsOffDoesNotCount() async throws {
        try await withLoopback(handler: { _ in
            .stream(headers: [("Content-Length", "100")]) { writer in
                for _ in 0..<100 {
                    try await writer.write([1])
                    try await Task.sleep(for: .milliseconds(100))
                }
            }
        }) { server, _, transport in
            let policy = CircuitBreakerMiddleware.Policy(failureRatio: 0.5, minimumThroughput: 2, breakDuration: .seconds(600))
            let breaker = CircuitBreakerMiddleware(policy: policy)
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [breaker]), transport: transport)
            for index in 1...2 {
                let failed = await #expect(throws: CurlewError.self) {
                    try await withDeadline(in: .milliseconds(300)) {
                        _ = try await client.stream(Numbered(index: index)).value.collect(upTo: 1 << 10)
                    }
                }
                #expect(failed?.code == .totalTimeout || failed?.code == .deadlineExceeded)
            }
            try await Task.sleep(for: .milliseconds(50))
            #expect(breaker.state(of: server.baseURL) == .closed)
            #expect(server.requests.count == 2)
        }
    }

    struct Broken: Endpoint {
        typealias Response = String
        var path: String { "broken" }
    }

    /// With a breaker per endpoint type, the endpoint that fails opens its own breaker; another
    /// endpoint of the same origin keeps going out.
    @Test func aBreakerPerEndpointTypeStopsOnlyTheFailingEndpoint() async throws {
        try await withLoopback(handler: { request in
            request.path == "/broken" ? .text("down", status: 503) : .text(request.path)
        }) { server, _, transport in
            let policy = CircuitBreakerMiddleware.Policy(minimumThroughput: 2, breakDuration: .seconds(600), perEndpointType: true)
            let breaker = CircuitBreakerMiddleware(policy: policy)
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [breaker]), transport: transport)
            for _ in 0..<2 {
                let failed = await #expect(throws: CurlewError.self) { try await client.send(Broken()) }
                #expect(failed?.status?.code == 503)
            }
            let refused = await #expect(throws: CurlewError.self) { try await client.send(Broken()) }
            #expect(refused?.code == .circuitOpen)
            let answer = try await client.send(Numbered(index: 1))
            #expect(answer == "/n/1")
            #expect(breaker.state(of: server.baseURL, endpointType: "Broken") == .open)
            #expect(breaker.state(of: server.baseURL, endpointType: "Numbered") == .closed)
            #expect(server.requests.map(\.uri) == ["/broken", "/broken", "/n/1"])
        }
    }

    /// With `failsOverWhileOpen`, a call the open breaker refuses goes to the failover mirror;
    /// without a failover origin it still fails with `.circuitOpen`, unsent.
    @Test func whileOpenCallsGoToTheFailoverOrigin() async throws {
        let mirror = try await LoopbackServer.start { request in .text("mirror \(request.path)") }
        do {
            try await withLoopback(handler: { _ in .text("down", status: 503) }) { primary, _, transport in
                let policy = CircuitBreakerMiddleware.Policy(minimumThroughput: 2, breakDuration: .seconds(600), failsOverWhileOpen: true)
                let breaker = CircuitBreakerMiddleware(policy: policy)
                let failover = FailoverMiddleware(baseURLs: [primary.baseURL, mirror.baseURL])
                let client = APIClient(configuration: ClientConfiguration(baseURL: primary.baseURL, middleware: [breaker, failover]), transport: transport)
                for index in 0..<2 {
                    let failed = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: index)) }
                    #expect(failed?.status?.code == 503)
                }
                #expect(breaker.state(of: primary.baseURL) == .open)
                let diverted = try await client.send(Numbered(index: 2))
                #expect(diverted == "mirror /n/2")
                #expect(primary.requests.map(\.uri) == ["/n/0", "/n/1"])
                #expect(mirror.requests.map(\.uri) == ["/n/2"])
                // The mirror's answer is not the primary's outcome: the breaker stays open.
                #expect(breaker.state(of: primary.baseURL) == .open)
                #expect(failover.currentBaseURL == primary.baseURL)

                let alone = CircuitBreakerMiddleware(policy: policy)
                let plain = APIClient(configuration: ClientConfiguration(baseURL: primary.baseURL, middleware: [alone]), transport: transport)
                for index in 3..<5 { _ = try? await plain.send(Numbered(index: index)) }
                let refused = await #expect(throws: CurlewError.self) { try await plain.send(Numbered(index: 5)) }
                #expect(refused?.code == .circuitOpen)
                #expect(refused?.stage == .middleware(.circuitBreaker))
                #expect(primary.requests.map(\.uri) == ["/n/0", "/n/1", "/n/3", "/n/4"])
            }
        } catch {
            await mirror.shutdown()
            throw error
        }
        await mirror.shutdown()
    }

    /// Sets a request's connection attempts while told to, and records what each request carried.
    final class ConnectAttempts: APIMiddleware, Sendable {
        /// The attempts to set (`nil`: leave the request's own), and what each request carried.
        let state = Mutex<(setting: Int?, seen: [Int?])>((1, []))

        func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
            var request = request
            state.withLock { state in
                if let setting = state.setting { request.options.maximumConnectAttempts = setting }
                state.seen.append(request.options.maximumConnectAttempts)
            }
            return try await next(request, context)
        }
    }

    /// A probe asks one question, "is the origin back?": against an origin that refuses
    /// connections it makes one connection attempt, not the transport's ten with their back-off.
    @Test func aProbeMakesOneConnectionAttempt() async throws {
        // Port 1 on the loopback interface refuses every connection.
        let origin = "http://127.0.0.1:1"
        let transport = CurlTransport(configuration: .init(engineCount: 1))
        let clock = TestClock()
        let breaker = CircuitBreakerMiddleware(policy: .init(minimumThroughput: 2, breakDuration: .seconds(5)), now: { clock.now })
        let attempts = ConnectAttempts()
        let client = APIClient(configuration: ClientConfiguration(baseURL: origin, middleware: [breaker, attempts]), transport: transport)
        for index in 0..<2 {
            let failed = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: index)) }
            #expect(failed?.code == .cannotConnect)
        }
        #expect(breaker.state(of: origin) == .open)
        attempts.state.withLock { $0.setting = nil }
        clock.advance(by: .seconds(5))
        let probe = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 2)) }
        #expect(probe?.code == .cannotConnect)
        #expect(breaker.state(of: origin) == .open)
        #expect(attempts.state.withLock { $0.seen } == [1, 1, 1], "the probe went out with one connection attempt")
        #expect(transport.statistics.connectRetries == 0)
        await transport.shutdown()
    }
}
