@testable import Curlew
@testable import CurlewResilience
import Foundation
import LoopbackServer
import MetricsTestKit
import Synchronization
import Testing
import TestSupport

@Suite("Adaptive concurrency limit")
struct AdaptiveConcurrencyTests {
    static let policy = AdaptiveConcurrencyMiddleware.Policy(initialLimit: 4, minimumLimit: 2, maximumLimit: 6, latencyThreshold: .milliseconds(100), backoff: 0.5)

    @Test func theLimitGrowsWhileBusyAndFastAndHalvesOnOverload() {
        var limit = AdaptiveLimit(policy: Self.policy)
        var taken: [Bool] = []
        for _ in 0..<5 { taken.append(limit.acquire()) }
        #expect(taken == [true, true, true, true, false])
        // Busy (4 of 4 in flight) and fast: +1.
        limit.release(latency: .milliseconds(10), dropped: false)
        #expect(limit.capacity == 5)
        // Three in flight of five is still busy: +1. Then two of six is not: no change.
        limit.release(latency: .milliseconds(10), dropped: false)
        #expect(limit.capacity == 6)
        limit.release(latency: .milliseconds(10), dropped: false)
        #expect(limit.capacity == 6)
        #expect(limit.inFlight == 1)
        // A slow call halves it (6 × 0.5 = 3); a drop halves it again, but never below the minimum.
        limit.release(latency: .milliseconds(150), dropped: false)
        #expect(limit.capacity == 3)
        _ = limit.acquire()
        limit.release(latency: .milliseconds(1), dropped: true)
        #expect(limit.capacity == 2)
        // Cancelled calls free their slot and change nothing.
        _ = limit.acquire()
        _ = limit.acquire()
        limit.release(latency: nil, dropped: false)
        limit.release(latency: nil, dropped: false)
        #expect(limit.capacity == 2)
        #expect(limit.inFlight == 0)
    }

    @Test func theLimitNeverPassesItsMaximum() {
        var limit = AdaptiveLimit(policy: Self.policy)
        for _ in 0..<20 {
            while limit.acquire() {}
            limit.release(latency: .milliseconds(1), dropped: false)
            while limit.inFlight > 0 { limit.release(latency: nil, dropped: false) }
        }
        #expect(limit.capacity == 6)
    }

    /// Two calls hold the origin's two slots; a third waits in line; a fourth finds the line full
    /// and fails without being sent. Once the server answers, the waiting call goes out: the server
    /// saw exactly three requests, never more than two at once.
    @Test func excessCallsWaitOrAreShedAndNothingShedIsSent() async throws {
        let gate = Mutex(false)
        try await withLoopback(handler: { request in
            while !gate.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(5)) }
            return .text(request.path)
        }) { server, _, transport in
            let limiter = AdaptiveConcurrencyMiddleware(
                policy: .init(initialLimit: 2, minimumLimit: 2, maximumLimit: 2, latencyThreshold: .seconds(60), maximumWaiting: 1))
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [limiter]), transport: transport)
            let first = Task { try await client.send(Numbered(index: 1)) }
            let second = Task { try await client.send(Numbered(index: 2)) }
            await waitForRequests(server, count: 2)
            let third = Task { try await client.send(Numbered(index: 3)) }
            #expect(await eventually { limiter.waiting(at: server.baseURL) == 1 })
            let shed = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 4)) }
            #expect(shed?.code == .concurrencyLimitExceeded)
            #expect(server.requestCount == 2)
            gate.withLock { $0 = true }
            let answers = [try await first.value, try await second.value, try await third.value]
            #expect(answers == ["/n/1", "/n/2", "/n/3"])
            #expect(server.requestCount == 3)
            #expect(server.peakOpenConnections <= 2)
            #expect(Set(server.requests.map(\.uri)) == ["/n/1", "/n/2", "/n/3"])
        }
    }

    /// A waiting call that is cancelled leaves the line and is never sent.
    @Test func aCancelledWaiterLeavesTheLine() async throws {
        let gate = Mutex(false)
        try await withLoopback(handler: { request in
            while !gate.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(5)) }
            return .text(request.path)
        }) { server, _, transport in
            let limiter = AdaptiveConcurrencyMiddleware(policy: .init(initialLimit: 1, maximumLimit: 1, maximumWaiting: 5))
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [limiter]), transport: transport)
            let first = Task { try await client.send(Numbered(index: 1)) }
            await waitForRequests(server, count: 1)
            let waiter = Task { try await client.send(Numbered(index: 2)) }
            #expect(await eventually { limiter.waiting(at: server.baseURL) == 1 })
            waiter.cancel()
            let outcome = await waiter.result
            #expect(throws: CancellationError.self) { try outcome.get() }
            #expect(limiter.waiting(at: server.baseURL) == 0)
            gate.withLock { $0 = true }
            let answer = try await first.value
            #expect(answer == "/n/1")
            let after = try await client.send(Numbered(index: 3))
            #expect(after == "/n/3")
            #expect(server.requests.map(\.uri) == ["/n/1", "/n/3"])
        }
    }

    /// A streamed body holds its slot until it ends: with a limit of one, a call made while the
    /// first call's body is still arriving is shed, unsent; once that body has been read to its
    /// end the next call goes out, and a stream its reader cancels gives its slot back too.
    @Test func aStreamedBodyHoldsItsSlotUntilItEnds() async throws {
        let gate = Mutex(false)
        try await withLoopback(handler: { request in
            guard request.path == "/n/1" || request.path == "/n/4" else { return .text(request.path) }
            return .stream { writer in
                try await writer.write(Array("first ".utf8))
                while !gate.withLock({ $0 }) && request.path == "/n/1" { try? await Task.sleep(for: .milliseconds(5)) }
                while request.path == "/n/4" && !request.connection.isClosed { try? await Task.sleep(for: .milliseconds(5)) }
                try await writer.write(Array("last".utf8))
            }
        }) { server, _, transport in
            let limiter = AdaptiveConcurrencyMiddleware(policy: .init(initialLimit: 1, maximumLimit: 1))
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [limiter]), transport: transport)
            let streamed = try await client.stream(Numbered(index: 1))
            #expect(limiter.inFlight(at: server.baseURL) == 1)
            let shed = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 2)) }
            #expect(shed?.code == .concurrencyLimitExceeded)
            gate.withLock { $0 = true }
            let body = try await streamed.value.collect(upTo: 1 << 10)
            #expect(String(decoding: body, as: UTF8.self) == "first last")
            #expect(limiter.inFlight(at: server.baseURL) == 0)
            #expect(try await client.send(Numbered(index: 3)) == "/n/3")
            let cancelled = try await client.stream(Numbered(index: 4))
            #expect(limiter.inFlight(at: server.baseURL) == 1)
            cancelled.value.cancel()
            #expect(await eventually { limiter.inFlight(at: server.baseURL) == 0 })
            #expect(try await client.send(Numbered(index: 5)) == "/n/5")
            #expect(server.requests.map(\.uri) == ["/n/1", "/n/3", "/n/4", "/n/5"])
        }
    }

    struct Failing: Endpoint {
        typealias Response = String
        var path: String { "fail" }
    }

    /// The limit's moves and a shed call are published as events and recorded in the calls'
    /// metrics factory: one fast busy call raises the limit from 1 to 2, two held calls fill it,
    /// a third is shed, and a 503 halves the limit back to 1. Every gauge value is exact.
    @Test func limitChangesAndShedCallsShowInEventsAndMetrics() async throws {
        let gate = Mutex(false)
        let metrics = TestMetrics()
        try await withLoopback(handler: { request in
            if request.path == "/fail" { return .text("busy", status: 503) }
            if request.path != "/n/0" { while !gate.withLock({ $0 }) { try? await Task.sleep(for: .milliseconds(5)) } }
            return .text(request.path)
        }) { server, _, transport in
            let limiter = AdaptiveConcurrencyMiddleware(
                policy: .init(initialLimit: 1, minimumLimit: 1, maximumLimit: 2, latencyThreshold: .seconds(60), backoff: 0.5))
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [limiter]), transport: transport)
            let events = client.events
            let collected = Task { await collectEvents(events, until: 2, of: .concurrencyLimitChanged) }
            let metered: @Sendable (inout RequestOptions) -> Void = { $0.instrumentation = CurlewInstrumentation(metricsFactory: metrics) }
            _ = try await client.send(Numbered(index: 0), options: metered)
            #expect(limiter.limit(of: server.baseURL) == 2)
            let first = Task { try await client.send(Numbered(index: 1), options: metered) }
            let second = Task { try await client.send(Numbered(index: 2), options: metered) }
            await waitForRequests(server, count: 3)
            let shed = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 3), options: metered) }
            #expect(shed?.code == .concurrencyLimitExceeded)
            gate.withLock { $0 = true }
            _ = try await (first.value, second.value)
            let failed = await #expect(throws: CurlewError.self) { try await client.send(Failing(), options: metered) }
            #expect(failed?.status?.code == 503)
            #expect(limiter.limit(of: server.baseURL) == 1)
            let origin = try #require(TrustedOrigins.origin(of: server.baseURL))
            let seen = await collected.value.filter { [.concurrencyLimitChanged, .concurrencyShed].contains($0.kind) }
            #expect(seen.map(\.kind) == [.concurrencyLimitChanged, .concurrencyShed, .concurrencyLimitChanged])
            #expect(seen.map(\.limit) == [2, 2, 1])
            #expect(seen.allSatisfy { $0.origin == origin })
            let dimensions = [("origin", origin)]
            #expect(metrics.counterTotal(label: "curlew_concurrency_shed_total", dimensions: dimensions) == 1)
            // Acquire and release of /n/0, /n/1, /n/2 and /fail; the shed call took no slot.
            #expect(try metrics.expectGauge("curlew_concurrency_limit", dimensions).values == [1, 2, 2, 2, 2, 2, 2, 1])
            #expect(try metrics.expectGauge("curlew_concurrency_in_flight", dimensions).values == [1, 0, 1, 2, 1, 0, 1, 0])
            #expect(server.requests.map(\.uri).filter { $0 == "/n/3" }.isEmpty)
        }
    }
}
