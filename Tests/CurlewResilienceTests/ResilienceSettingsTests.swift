import Curlew
@testable import CurlewResilience
import LoopbackServer
import Testing
import TestSupport

/// A setting a resilience middleware cannot honour fails every call through it, unsent, with
/// `.invalidConnectionSettings` naming the setting and its value. Each used to be clamped or taken
/// at its word: a negative hedge delay hedged at once, a negative break let every call probe, a
/// failure ratio of 2 was made 1, a minimum limit of 0 was made 1.
@Suite("Resilience: refused settings", .timeLimit(.minutes(1)))
struct ResilienceSettingsTests {
    typealias Breaker = CircuitBreakerMiddleware.Policy
    typealias Limiter = AdaptiveConcurrencyMiddleware.Policy

    static func changed<Value>(_ value: Value, _ change: (inout Value) -> Void) -> Value {
        var value = value
        change(&value)
        return value
    }

    static let cases: [(String, any APIMiddleware)] = [
        ("HedgingMiddleware.delay must be zero or longer, not -0.001 seconds", HedgingMiddleware(delay: .milliseconds(-1))),
        (
            "HedgingMiddleware.delay must be at most 365 days (maximumHedges 0 turns hedging off), not 9.223372036854776e+18 seconds",
            HedgingMiddleware(delay: .seconds(Int64.max))
        ),
        ("HedgingMiddleware.percentile must be between 0 and 1, not 1.5", HedgingMiddleware(delay: .milliseconds(50), percentile: 1.5)),
        ("HedgingMiddleware.minimumSamples must be at least 1, not 0", HedgingMiddleware(delay: .milliseconds(50), minimumSamples: 0)),
        ("HedgingMiddleware.maximumHedges must be zero or more, not -1", HedgingMiddleware(delay: .milliseconds(50), maximumHedges: -1)),
        ("HedgingMiddleware.budget must be between 0 and 1, not -0.1", HedgingMiddleware(delay: .milliseconds(50), budget: -0.1)),
        ("HedgingMiddleware.budget must be between 0 and 1, not nan", HedgingMiddleware(delay: .milliseconds(50), budget: .nan)),
        ("HedgingMiddleware.burst must be zero or more, not -2", HedgingMiddleware(delay: .milliseconds(50), burst: -2)),
        (
            "CircuitBreakerMiddleware.Policy.breakDuration must be zero or longer, not -1.0 seconds",
            CircuitBreakerMiddleware(policy: Breaker(breakDuration: .seconds(-1)))
        ),
        (
            "CircuitBreakerMiddleware.Policy.failureRatio must be more than 0 and at most 1, not 2.0",
            CircuitBreakerMiddleware(policy: Breaker(failureRatio: 2))
        ),
        (
            "CircuitBreakerMiddleware.Policy.failureRatio must be more than 0 and at most 1, not 0.0",
            CircuitBreakerMiddleware(policy: Breaker(failureRatio: 0))
        ),
        (
            "CircuitBreakerMiddleware.Policy.failureRatio must be more than 0 and at most 1, not nan",
            CircuitBreakerMiddleware(policy: Breaker(failureRatio: .nan))
        ),
        ("CircuitBreakerMiddleware.Policy.minimumThroughput must be at least 1, not 0", CircuitBreakerMiddleware(policy: Breaker(minimumThroughput: 0))),
        ("CircuitBreakerMiddleware.Policy.window must be longer than zero, not 0.0 seconds", CircuitBreakerMiddleware(policy: Breaker(window: .zero))),
        (
            "CircuitBreakerMiddleware.Policy.window must be longer than zero, not -5.0 seconds",
            CircuitBreakerMiddleware(policy: changed(Breaker()) { $0.window = .seconds(-5) })
        ),
        ("AdaptiveConcurrencyMiddleware.Policy.minimumLimit must be at least 1, not 0", AdaptiveConcurrencyMiddleware(policy: Limiter(minimumLimit: 0))),
        (
            "AdaptiveConcurrencyMiddleware.Policy.maximumLimit must be at least minimumLimit (8), not 4",
            AdaptiveConcurrencyMiddleware(policy: Limiter(minimumLimit: 8, maximumLimit: 4))
        ),
        (
            "AdaptiveConcurrencyMiddleware.Policy.maximumLimit must be at most 1000000, not 9223372036854775807",
            AdaptiveConcurrencyMiddleware(policy: Limiter(maximumLimit: .max))
        ),
        (
            "AdaptiveConcurrencyMiddleware.Policy.Gradient.averagedBaselineWindows must be between 1 and 1000000, not 9223372036854775807",
            AdaptiveConcurrencyMiddleware(policy: Limiter(algorithm: .gradient(.init(averagedBaselineWindows: .max))))
        ),
        (
            "AdaptiveConcurrencyMiddleware.Policy.initialLimit must be between minimumLimit and maximumLimit (1…10), not 50",
            AdaptiveConcurrencyMiddleware(policy: changed(Limiter(maximumLimit: 10)) { $0.initialLimit = 50 })
        ),
        ("AdaptiveConcurrencyMiddleware.Policy.maximumWaiting must be zero or more, not -1", AdaptiveConcurrencyMiddleware(policy: Limiter(maximumWaiting: -1))),
        (
            "AdaptiveConcurrencyMiddleware.Policy.latencyThreshold must be longer than zero, not 0.0 seconds",
            AdaptiveConcurrencyMiddleware(policy: Limiter(latencyThreshold: .zero))
        ),
        (
            "AdaptiveConcurrencyMiddleware.Policy.backoff must be between 0.5 and 1, not 0.2",
            AdaptiveConcurrencyMiddleware(policy: Limiter(latencyThreshold: .seconds(1), backoff: 0.2))
        ),
        (
            "AdaptiveConcurrencyMiddleware.Policy.Gradient.smoothing must be more than 0 and at most 1, not 0.0",
            AdaptiveConcurrencyMiddleware(policy: Limiter(algorithm: .gradient(.init(smoothing: 0))))
        ),
        (
            "AdaptiveConcurrencyMiddleware.Policy.Gradient.percentile must be between 0 and 1, not nan",
            AdaptiveConcurrencyMiddleware(policy: Limiter(algorithm: .gradient(.init(percentile: .nan))))
        ),
        (
            "AdaptiveConcurrencyMiddleware.Policy.Gradient.tolerance must be zero or more, not -0.1",
            AdaptiveConcurrencyMiddleware(policy: Limiter(algorithm: .gradient(.init(tolerance: -0.1))))
        ),
        (
            "AdaptiveConcurrencyMiddleware.Policy.Gradient.probeConcurrency must be at least 1, not 0",
            AdaptiveConcurrencyMiddleware(policy: Limiter(algorithm: .gradient(.init(probeConcurrency: 0))))
        ),
        (
            "AdaptiveConcurrencyMiddleware.Policy.Gradient.minimumWindow must be at least 1, not -1",
            AdaptiveConcurrencyMiddleware(policy: Limiter(algorithm: .gradient(.init(minimumWindow: -1))))
        ),
        (
            "AdaptiveConcurrencyMiddleware.Policy.Gradient.averagedBaselineWindows must be between 1 and 1000000, not 0",
            AdaptiveConcurrencyMiddleware(policy: Limiter(algorithm: .gradient(.init(averagedBaselineWindows: 0))))
        ),
    ]

    @Test(arguments: Self.cases)
    func aSettingTheMiddlewareCannotHonourFailsTheCallUnsent(_ message: String, _ middleware: any APIMiddleware) async throws {
        try await withLoopback(handler: { _ in .text("sent") }) { server, _, transport in
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [middleware]), transport: transport)
            let error = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "once")) }
            #expect(error?.code == .invalidConnectionSettings)
            #expect(error?.stage == .configuration)
            #expect(error?.message == message + "; nothing was sent")
            // The second call hears the same: the refusal holds for the middleware's life.
            let again = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "twice")) }
            #expect(again?.message == message + "; nothing was sent")
            #expect(server.requestCount == 0)
        }
    }

    /// The edges that mean something are kept: no hedging, hedges with the call, a breaker that
    /// probes at once, a limiter pinned to one slot.
    @Test func edgeValuesThatMeanSomethingAreAccepted() async throws {
        try await withLoopback(handler: { _ in .text("sent") }) { server, _, transport in
            let middleware: [any APIMiddleware] = [
                HedgingMiddleware(delay: .zero, percentile: 1, maximumHedges: 0, budget: 0, burst: 0),
                CircuitBreakerMiddleware(policy: Breaker(failureRatio: 1, minimumThroughput: 1, breakDuration: .zero)),
                AdaptiveConcurrencyMiddleware(policy: Limiter(initialLimit: 1, minimumLimit: 1, maximumLimit: 1, latencyThreshold: .seconds(1), backoff: 0.5)),
            ]
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: middleware), transport: transport)
            let answer = try await client.send(Send(path: "ok"))
            #expect(answer == "sent")
            #expect(server.requestCount == 1)
        }
    }

    /// A policy's initializer brings the initial limit within the bounds (the default 20 with a
    /// maximum of 10 starts at 10) rather than refusing a default the caller never wrote.
    @Test func theInitialLimitIsBroughtWithinTheBoundsByTheInitializer() {
        #expect(Limiter(maximumLimit: 10).initialLimit == 10)
        #expect(Limiter(minimumLimit: 30).initialLimit == 30)
        #expect(Limiter(maximumLimit: 10).refusal() == nil)
    }

    /// Settings that mean "no limit" are taken as such, not as an overflow: a budget of
    /// `burst: .max` hedges, a queue of `maximumWaiting: .max` lets every call wait, and a
    /// breaker open "until restart" (`.seconds(Int64.max)`) refuses with `.circuitOpen`.
    @Test func unboundedSettingsAreTakenAtTheirWord() async throws {
        var budget = HedgeBudget(ratio: 0.1, burst: .max)
        budget.deposit()
        let withdrew = budget.withdraw()
        #expect(withdrew)
        #expect(budget.tokens == Int.max / 1000 - 1 || budget.tokens == Int.max / 1000)
        let gate = TestGate()
        try await withLoopback(handler: { request in
            while request.path == "/slow", !gate.isOpen, !request.connection.isClosed { try? await Task.sleep(for: .milliseconds(5)) }
            return request.path == "/down" ? .text("down", status: 503) : .text("sent")
        }) { server, _, transport in
            // The default gradient starts with a probe that holds slots back: the calls beyond it wait.
            let limiter = AdaptiveConcurrencyMiddleware(policy: Limiter(maximumWaiting: .max))
            let limited = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [limiter]), transport: transport)
            let calls = (0..<6).map { _ in Task { try await limited.send(Send(path: "slow")) } }
            #expect(await eventually { server.requestCount >= 1 })
            gate.open()
            for call in calls {
                let answer = try await call.value
                #expect(answer == "sent")
            }

            let breaker = CircuitBreakerMiddleware(policy: Breaker(minimumThroughput: 1, breakDuration: .seconds(Int64.max)))
            let guarded = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [breaker]), transport: transport)
            await #expect(throws: CurlewError.self) { try await guarded.send(Send(path: "down")) }
            let refused = await #expect(throws: CurlewError.self) { try await guarded.send(Send(path: "down")) }
            #expect(refused?.code == .circuitOpen)
        }
    }
}
