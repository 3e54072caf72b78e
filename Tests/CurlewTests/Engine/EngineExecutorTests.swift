import Curlew
import Foundation
import LoopbackServer
import Testing
import TestSupport

/// Tasks that prefer the transport's executor run on the engine thread and their requests work
/// as anywhere else; after shutdown their work moves to the global executor.
@Suite("Engine executor")
struct EngineExecutorTests {
    @Test func requestsFromTasksOnTheEngineThread() async throws {
        try await withLoopback(handler: ConnectionTests.numberEcho) { server, client, transport in
            let answers = try await withThrowingTaskGroup(of: [String].self) { group in
                for worker in 0..<4 {
                    group.addTask(executorPreference: transport.executor) {
                        var answers: [String] = []
                        for round in 0..<25 { answers.append(try await client.send(Numbered(index: worker * 100 + round))) }
                        return answers
                    }
                }
                return try await group.reduce(into: [String]()) { $0 += $1 }
            }
            #expect(answers.count == 100)
            var expected: Set<String> = []
            for worker in 0..<4 {
                for round in 0..<25 { expected.insert(String(worker * 100 + round)) }
            }
            #expect(Set(answers) == expected)
            #expect(server.requestCount == 100)
        }
    }

    @Test func cancellationOnTheEngineThread() async throws {
        // The answer waits for the client to go (at most a minute): however late the
        // cancellation comes on a loaded machine, it comes before the answer.
        try await withLoopback(handler: { request in
            let deadline = ContinuousClock.now + .seconds(60)
            while !request.connection.isClosed, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(10)) }
            return .text("late")
        }) { server, client, transport in
            let task = Task(executorPreference: transport.executor) {
                try await client.send(Numbered(index: 1))
            }
            await waitForRequests(server, count: 1)
            task.cancel()
            await #expect(throws: CancellationError.self) { _ = try await task.value }
        }
    }

    @Test func workAfterShutdownRunsElsewhere() async throws {
        let server = try await LoopbackServer.start(handler: ConnectionTests.numberEcho)
        let transport = CurlTransport()
        let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL), transport: transport)
        await transport.shutdown()
        let outcome = await Task(executorPreference: transport.executor) { () -> String in
            do {
                _ = try await client.send(Numbered(index: 1))
                return "sent"
            } catch let error as CurlewError {
                return "\(error.code)"
            } catch {
                return "other"
            }
        }.value
        #expect(outcome == "\(CurlewError.Code.shutdown)")
        await server.shutdown()
    }
}
