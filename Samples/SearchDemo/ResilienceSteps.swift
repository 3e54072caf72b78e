import Curlew
import CurlewResilience
import Foundation
import LoopbackServer
import Synchronization

// The resilience tour: a deadline that caps every call made inside it, a hedge that beats a slow
// answer, and a circuit breaker that stops calling a failing origin.

/// Routes for the resilience tour under `/api/resilience`.
enum ResilienceDemoRoutes {
    /// Requests `/api/resilience/sometimes-slow` has seen (the first of each pair is slow).
    static let slowCounter = Mutex(0)

    /// `GET /api/resilience/slow`: answers after two seconds;
    /// `GET /api/resilience/sometimes-slow`: every other request takes two seconds;
    /// `GET /api/resilience/down`: 503.
    static func add(to router: inout LoopbackRouter) {
        router.on("GET", "/api/resilience/slow") { request, _ in
            try? await Task.sleep(for: .seconds(2))
            return .text("late")
        }
        router.on("GET", "/api/resilience/sometimes-slow") { request, _ in
            let count = slowCounter.withLock { count in
                count += 1
                return count
            }
            if count % 2 == 1 { try? await Task.sleep(for: .seconds(2)) }
            return .text("answer \(count)")
        }
        router.on("GET", "/api/resilience/down") { _, _ in
            ServerResponse(status: 503, body: Array("down for maintenance".utf8))
        }
    }
}

/// A GET of a resilience route, as text.
struct ResilienceRoute: Endpoint {
    typealias Response = String
    var path: String
}

/// Deadlines, hedging and the circuit breaker (issue 29), each a middleware or a task-local
/// value, each off until asked for.
struct ResilienceStep: TourStep {
    let title = "Resilience: a deadline that flows, a hedged request, a circuit breaker"

    func run(with client: APIClient) async throws {
        // 1. A deadline caps every call inside it: the slow answer is abandoned at 150 ms.
        let started = ContinuousClock.now
        do {
            _ = try await withDeadline(in: .milliseconds(150)) {
                try await client.send(ResilienceRoute(path: "resilience/slow"))
            }
        } catch let error as CurlewError where error.code == .deadlineExceeded {
            say("withDeadline(in: .milliseconds(150)) around a 2 s answer → .\(error.code) after \(Self.milliseconds(since: started)) ms")
        }

        // 2. A hedge: after 100 ms without an answer a second attempt goes out; the first
        //    answer wins and the slow one is cancelled.
        let hedged = APIClient(
            configuration: ClientConfiguration(baseURL: client.configuration.baseURL, middleware: [HedgingMiddleware(delay: .milliseconds(100))]),
            transport: client.transport)
        let hedgeStarted = ContinuousClock.now
        let answer = try await hedged.send(ResilienceRoute(path: "resilience/sometimes-slow"))
        say("HedgingMiddleware(delay: 100 ms), the first answer slow (2 s) → \"\(answer)\" after \(Self.milliseconds(since: hedgeStarted)) ms")

        // 3. A circuit breaker: after four failures out of four it opens, and calls fail at once
        //    without reaching the origin.
        let breaker = CircuitBreakerMiddleware(policy: .init(failureRatio: 0.5, minimumThroughput: 4, window: .seconds(10), breakDuration: .seconds(5)))
        let guarded = APIClient(
            configuration: ClientConfiguration(baseURL: client.configuration.baseURL, middleware: [breaker]), transport: client.transport)
        var outcomes: [String] = []
        for _ in 0..<6 {
            do {
                _ = try await guarded.send(ResilienceRoute(path: "resilience/down"))
            } catch let error as CurlewError {
                outcomes.append(".\(error.code)")
            }
        }
        say("six calls to an origin answering 503 → \(outcomes.joined(separator: ", "))")
        say("the breaker for that origin is now \(breaker.state(of: (client.configuration.baseURL ?? "") + "/resilience/down"))")
    }

    static func milliseconds(since start: ContinuousClock.Instant) -> Int {
        let elapsed = ContinuousClock.now - start
        return Int(elapsed.components.seconds * 1000 + elapsed.components.attoseconds / 1_000_000_000_000_000)
    }
}
