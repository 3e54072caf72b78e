@testable import Curlew
import Foundation
import HTTPTypes
import LoopbackServer
import Synchronization
import Testing

@Suite("Hedged requests")
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
            let seen = Task { await EventTests.collect(events, until: 1, of: .finished) }
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
}
