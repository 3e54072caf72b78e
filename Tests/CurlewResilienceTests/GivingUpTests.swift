@testable import Curlew
@testable import CurlewResilience
import Foundation
import HTTPTypes
import LoopbackServer
import Synchronization
import TestSupport
import Testing

/// Callers that give up — cancelled, or out of their deadline — against a real server that holds
/// every request: the breaker learns nothing from them, and a hedge never outlives the deadline.
@Suite("Resilience when callers give up", .timeLimit(.minutes(1)), .timingSensitive)
struct GivingUpTests {
    /// Whether the origin answers 503; guarded by its mutex.
    final class Failing: Sendable {
        let value = Mutex(false)
    }

    /// Holds every request until the client goes, or answers 503 once told to.
    static func origin(failing: Failing) -> @Sendable (ServerRequest) async -> ServerResponse {
        { request in
            if failing.value.withLock({ $0 }) { return .text("down", status: 503) }
            await request.connection.closed()
            return .text("late")
        }
    }

    /// Five calls cancelled in flight and four cut off by their deadline: none opens a breaker
    /// that opens after two failures; two 503s then do, so it was counting all along.
    @Test func cancelledCallsAndSpentDeadlinesNeverOpenTheBreaker() async throws {
        let failing = Failing()
        try await withLoopback(handler: Self.origin(failing: failing)) { server, _, transport in
            let breaker = CircuitBreakerMiddleware(policy: .init(failureRatio: 0.5, minimumThroughput: 2, breakDuration: .seconds(600)))
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [breaker]), transport: transport)
            let calls = (0..<5).map { index in Task { try await client.send(Numbered(index: index)) } }
            #expect(await eventually { server.requestCount == 5 })
            calls.forEach { $0.cancel() }
            for call in calls {
                let result = await call.result
                #expect(throws: CancellationError.self) { try result.get() }
            }
            #expect(breaker.state(of: server.baseURL) == .closed)
            // Four at once, each with a deadline of 2 s: long enough to reach the server however
            // loaded the machine is.
            let codes = await withTaskGroup(of: CurlewError.Code?.self) { group in
                for index in 5..<9 {
                    group.addTask {
                        do {
                            _ = try await withDeadline(in: .seconds(2)) { try await client.send(Numbered(index: index)) }
                            return nil
                        } catch {
                            return (error as? CurlewError)?.code
                        }
                    }
                }
                return await group.reduce(into: [CurlewError.Code?]()) { $0.append($1) }
            }
            #expect(codes == Array(repeating: .deadlineExceeded, count: 4))
            #expect(breaker.state(of: server.baseURL) == .closed)
            #expect(server.requestCount == 9)
            failing.value.withLock { $0 = true }
            for index in 9..<11 {
                let error = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: index)) }
                #expect(error?.status?.code == 503)
            }
            #expect(breaker.state(of: server.baseURL) == .open)
            let refused = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 11)) }
            #expect(refused?.code == .circuitOpen)
            #expect(server.requestCount == 11)
        }
    }

    /// Under a deadline of 20 s with a hedge delay of 50 ms, the hedge goes out, each attempt
    /// tells the server the time it has left, and at the deadline both are cut off (the server
    /// sees both disconnect) with `.deadlineExceeded`. A deadline shorter than the hedge delay
    /// ends the call with no hedge sent. (A deadline of many seconds: on a machine running other
    /// builds beside the suite, the hedge's new connection once took more than 5 s to reach the
    /// server, which then saw one request.)
    @Test func aHedgeCarriesTheTimeLeftAndNeverOutlivesTheDeadline() async throws {
        try await withLoopback(handler: Self.origin(failing: Failing())) { server, _, transport in
            let hedging = HedgingMiddleware(delay: .milliseconds(50), budget: 1, burst: 10)
            var configuration = ClientConfiguration(baseURL: server.baseURL, middleware: [hedging])
            configuration.deadlineHeader = HTTPField.Name("grpc-timeout")
            let client = APIClient(configuration: configuration, transport: transport)
            let error = await #expect(throws: CurlewError.self) {
                try await withDeadline(in: .seconds(20)) { try await client.send(Numbered(index: 1)) }
            }
            #expect(error?.code == .deadlineExceeded)
            #expect(error?.stage == .deadline)
            #expect(server.requests.map(\.uri) == ["/n/1", "/n/1"])
            let left = server.requests.map { $0.header("grpc-timeout").flatMap { $0.hasSuffix("m") ? Int($0.dropLast()) : nil } }
            #expect(left.count == 2)
            #expect(left.allSatisfy { ($0 ?? 0) > 0 && ($0 ?? 0) <= 20000 }, "\(left)")
            #expect(await eventually { server.disconnectsDuringResponse == 2 })

            var patient = configuration
            patient.middleware = [HedgingMiddleware(delay: .seconds(3), budget: 1, burst: 10)]
            let slowHedges = APIClient(configuration: patient, transport: transport)
            let short = await #expect(throws: CurlewError.self) {
                try await withDeadline(in: .seconds(1)) { try await slowHedges.send(Numbered(index: 2)) }
            }
            #expect(short?.code == .deadlineExceeded)
            #expect(server.requests.filter { $0.uri == "/n/2" }.count <= 1)
        }
    }
}
