@testable import Curlew
@testable import CurlewResilience
import Foundation
import HTTPTypes
import LoopbackServer
import Synchronization
import Testing
import TestSupport

@Suite("Hedged requests", .timeLimit(.minutes(1)))
struct HedgingTests {
    @Test func theBudgetCapsHedgesAtTheBurstPlusTheRatioOfCalls() {
        var budget = HedgeBudget(ratio: 0.1, burst: 2)
        var granted: [Bool] = []
        for _ in 0..<3 { granted.append(budget.withdraw()) }
        #expect(granted == [true, true, false])  // the burst, then nothing
        for _ in 0..<9 { budget.deposit() }
        let afterNine = budget.withdraw()
        #expect(!afterNine)  // nine calls earned 0.9 of a hedge
        budget.deposit()
        let afterTen = budget.withdraw()
        #expect(afterTen)  // the tenth completes one
        for _ in 0..<1000 { budget.deposit() }
        #expect(budget.tokens == 2)  // never more than the burst saved up
        var none = HedgeBudget(ratio: 0, burst: 0)
        none.deposit()
        let fromNothing = none.withdraw()
        #expect(!fromNothing)
    }

    @Test func onlyCallsThatMayRunTwiceAreHedged() {
        #expect(HedgingMiddleware.mayRunTwice(PreparedRequest(method: .get, url: "http://127.0.0.1:1/")))
        #expect(HedgingMiddleware.mayRunTwice(PreparedRequest(method: .put, url: "http://127.0.0.1:1/", body: Data("x".utf8))))
        #expect(!HedgingMiddleware.mayRunTwice(PreparedRequest(method: .post, url: "http://127.0.0.1:1/", body: Data("x".utf8))))
        #expect(HedgingMiddleware.mayRunTwice(PreparedRequest(method: .post, url: "http://127.0.0.1:1/", headers: [RetryMiddleware.idempotencyKey: "k1"], body: Data("x".utf8))))
    }

    /// The first request hangs, the hedge sent after 50 ms answers: the call gets the hedge's
    /// answer, the server saw exactly two requests, and the first one's connection was closed.
    @Test func aSlowFirstAttemptLosesToTheHedgeAndIsCancelled() async throws {
        let arrivals = Mutex(0)
        try await withLoopback(handler: { request in
            let arrival = arrivals.withLock { count in
                count += 1
                return count
            }
            guard arrival == 1 else { return .text("hedge") }
            await request.connection.closed()
            return .text("too late")
        }) { server, _, transport in
            let hedging = HedgingMiddleware(delay: .milliseconds(50), budget: 0.1, burst: 1)
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [hedging]), transport: transport)
            let events = client.events
            let seen = Task { await collectEvents(events, until: 1, of: .finished) }
            let answer = try await client.send(Numbered(index: 1))
            #expect(answer == "hedge")
            #expect(server.requestCount == 2)
            #expect(await eventually { server.disconnectsDuringResponse == 1 })
            let kinds = await seen.value.filter { [.hedgeSent, .hedgeWon].contains($0.kind) }
            #expect(kinds.map(\.kind) == [.hedgeSent, .hedgeWon])
            #expect(kinds.map(\.attempt) == [2, 2])
        }
    }

    /// Without a token in the budget, or for a POST, no hedge goes out: the slow answer is the
    /// call's, and the server saw one request per call.
    @Test func noBudgetOrAPostMeansNoHedge() async throws {
        try await withLoopback(handler: { request in
            try? await Task.sleep(for: .milliseconds(200))
            return .text(request.method)
        }) { server, _, transport in
            let broke = HedgingMiddleware(delay: .milliseconds(10), budget: 0, burst: 0)
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [broke]), transport: transport)
            let get = try await client.send(Send(path: "slow"))
            #expect(get == "GET")
            #expect(server.requestCount == 1)
            let funded = HedgingMiddleware(delay: .milliseconds(10), budget: 1, burst: 1)
            let poster = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [funded]), transport: transport)
            let post = try await poster.send(Send(method: .post, path: "slow", body: .text("x")))
            #expect(post == "POST")
            #expect(server.requestCount == 2)
        }
    }

    /// The window keeps the last `capacity` latencies and their percentile, recomputed every
    /// `refreshEvery` samples (and at the first); old samples drop out.
    @Test func theLatencyWindowTracksThePercentileOfRecentCalls() {
        var window = LatencyWindow(percentile: 0.95, capacity: 100, refreshEvery: 1)
        #expect(window.current == nil)
        for value in 1...100 { window.record(.milliseconds(value)) }
        #expect(window.count == 100)
        #expect(window.current == .milliseconds(95))
        // A hundred fast calls replace the whole ring: the old samples no longer count.
        for _ in 0..<100 { window.record(.milliseconds(2)) }
        #expect(window.count == 100)
        #expect(window.current == .milliseconds(2))
        // Recomputed at the first sample, then after every tenth new one.
        var cadenced = LatencyWindow(percentile: 0.95, capacity: 100, refreshEvery: 10)
        cadenced.record(.milliseconds(1))
        #expect(cadenced.current == .milliseconds(1))
        for value in 2...91 { cadenced.record(.milliseconds(value)) }
        #expect(cadenced.current == .milliseconds(87))  // the nearest-rank p95 of 1…91 ms
        for value in 92...100 { cadenced.record(.milliseconds(value)) }
        #expect(cadenced.current == .milliseconds(87))  // nine new samples: not yet
        cadenced.record(.milliseconds(101))
        #expect(cadenced.current == .milliseconds(96))  // 2…101 ms now (the ring dropped 1 ms)
        let four: [Int64] = [40, 10, 30, 20]
        #expect(LatencyWindow.percentile(0.5, of: four) == .nanoseconds(20))
        #expect(LatencyWindow.percentile(1, of: four) == .nanoseconds(40))
        #expect(LatencyWindow.percentile(0, of: four) == .nanoseconds(10))
        #expect(LatencyWindow.percentile(0.95, of: []) == nil)
    }

    /// An endpoint type's delay is the fixed one until `minimumSamples` of its calls were
    /// measured, then their percentile; another type keeps the fixed one.
    @Test func theHedgeDelayIsTheFixedOneUntilEnoughSamplesThenTheirPercentile() {
        let hedging = HedgingMiddleware(delay: .milliseconds(50), percentile: 0.95, minimumSamples: 20)
        for _ in 0..<19 { hedging.record(.milliseconds(7), for: "Search") }
        #expect(hedging.hedgeDelay(for: "Search") == .milliseconds(50))
        hedging.record(.milliseconds(7), for: "Search")
        #expect(hedging.hedgeDelay(for: "Search") == .milliseconds(7))
        #expect(hedging.hedgeDelay(for: "Profile") == .milliseconds(50))
        let fixed = HedgingMiddleware(delay: .milliseconds(50))
        for _ in 0..<40 { fixed.record(.milliseconds(7), for: "Search") }
        #expect(fixed.hedgeDelay(for: "Search") == .milliseconds(50))
    }

    /// Five fast calls teach the middleware the type's latency; the sixth call's first attempt
    /// hangs, and its hedge goes out after the learned delay — the fixed one is a minute, so
    /// without the learned delay the call would hang until the suite's time limit.
    @Test func aLearnedDelaySendsTheHedge() async throws {
        let arrivals = Mutex(0)
        try await withLoopback(handler: { request in
            guard request.path == "/n/6" else { return .text(request.path) }
            let first = arrivals.withLock { count in
                count += 1
                return count == 1
            }
            guard first else { return .text("hedge") }
            await request.connection.closed()
            return .text("too late")
        }) { server, _, transport in
            let hedging = HedgingMiddleware(delay: .seconds(60), percentile: 0.95, minimumSamples: 5, budget: 1, burst: 1)
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [hedging]), transport: transport)
            for index in 1...5 { _ = try await client.send(Numbered(index: index)) }
            let learned = hedging.hedgeDelay(for: "Numbered")
            #expect(learned < .seconds(60))
            let events = client.events
            let seen = Task { await collectEvents(events, until: 1, of: .finished) }
            let answer = try await client.send(Numbered(index: 6))
            #expect(answer == "hedge")
            #expect(server.requests.filter { $0.path == "/n/6" }.count == 2)
            let sent = await seen.value.filter { $0.kind == .hedgeSent }
            #expect(sent.map(\.delay) == [learned])
        }
    }

    /// With `hedgesToFailover`, the hedge of a call stuck at the primary goes to the failover
    /// mirror: its answer wins, each server saw one request, and the primary's is cancelled.
    @Test func aHedgeGoesToTheFailoverOrigin() async throws {
        let mirror = try await LoopbackServer.start { _ in .text("mirror") }
        do {
            try await withLoopback(handler: { request in
                await request.connection.closed()
                return .text("primary")
            }) { primary, _, transport in
                let hedging = HedgingMiddleware(delay: .milliseconds(50), budget: 1, burst: 1, hedgesToFailover: true)
                let failover = FailoverMiddleware(baseURLs: [primary.baseURL, mirror.baseURL])
                let client = APIClient(configuration: ClientConfiguration(baseURL: primary.baseURL, middleware: [hedging, failover]), transport: transport)
                let answer = try await client.send(Numbered(index: 1))
                #expect(answer == "mirror")
                #expect(primary.requestCount == 1)
                #expect(mirror.requests.map(\.uri) == ["/n/1"])
                #expect(await eventually { primary.disconnectsDuringResponse == 1 })
                // The mirror served a hedge; the primary stays the base URL in use.
                #expect(failover.currentBaseURL == primary.baseURL)
            }
        } catch {
            await mirror.shutdown()
            throw error
        }
        await mirror.shutdown()
    }
}
