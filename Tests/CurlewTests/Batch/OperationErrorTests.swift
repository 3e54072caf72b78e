import Curlew
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// Errors of the caller's own code in chains and batches are told apart from network failures:
/// code that retries on `level == .transport` must not retry an application's logic error.
@Suite("Errors of chain steps and batch operations", .timeLimit(.minutes(1)))
struct OperationErrorTests {
    struct Answer: Endpoint {
        typealias Response = String
        var path: String
    }

    /// What a step throws when the previous answer lacks what it needs.
    struct MissingValue: Error, Equatable { var name: String }

    /// Keeps the last outcome an accessory was given.
    final class OutcomeRecorder: Accessory {
        private let outcomes = Mutex<[Result<Void, any Error>]>([])
        var last: Result<Void, any Error>? { outcomes.withLock { $0.last } }
        func willStart(_ activity: Activity) {}
        func willStop(_ activity: Activity, outcome: Result<Void, any Error>) { outcomes.withLock { $0.append(outcome) } }
    }

    static let router: LoopbackRouter = {
        var router = LoopbackRouter()
        router.on("GET", "/ok") { _, _ in .text("fine") }
        router.on("GET", "/missing") { _, _ in .text("no such thing", status: 404) }
        router.on("GET", "/slow") { request, _ in
            await request.connection.closed()
            return .text("late")
        }
        return router
    }()

    @Test func aStepsOwnErrorIsOperationFailedNotATransportFailure() async throws {
        try await withLoopback(router: Self.router) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) {
                _ = try await client.chain(Answer(path: "ok"), name: "first")
                    .then("second") { (previous: String) -> Answer in
                        guard previous == "expected" else { throw MissingValue(name: "expected") }
                        return Answer(path: "ok")
                    }
                    .run()
            }
            #expect(error?.code == .operationFailed)
            #expect(error?.level == .invalidRequest)
            #expect(error?.underlying as? MissingValue == MissingValue(name: "expected"))
            #expect(error?.stage == .chainStep(2, name: "second"))
            #expect(server.requests.map(\.path) == ["/ok"])
        }
    }

    @Test func aBatchOperationsOwnErrorComesBackAsThrown() async throws {
        try await withLoopback(router: Self.router) { server, client, _ in
            let operations: [@Sendable (APIClient) async throws -> String] = [
                { client in try await client.send(Answer(path: "ok")) },
                { _ in throw MissingValue(name: "id") },
            ]
            let results = await client.batch(operations: operations)
            #expect(results.count == 2)
            #expect((try? results[0].get()) == "fine")
            guard case .failure(let failure) = results[1] else {
                Issue.record("the throwing operation succeeded")
                return
            }
            // The operation is the caller's own code: its error comes back as it was thrown.
            #expect(failure as? MissingValue == MissingValue(name: "id"))
            #expect(server.requests.map(\.path) == ["/ok"])
        }
    }

    /// An accessory around a batch of operations: an operation's own error is `operationFailed`.
    @Test func anAccessorySeesOperationFailedForABatchOperationsOwnError() async throws {
        try await withLoopback(router: Self.router) { server, _, _ in
            let recorder = OutcomeRecorder()
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, accessories: [recorder]))
            let operations: [@Sendable (APIClient) async throws -> String] = [{ _ in throw MissingValue(name: "id") }]
            _ = await client.batch(operations: operations)
            guard case .failure(let failure) = recorder.last else {
                Issue.record("the batch's outcome was a success")
                return
            }
            let error = try #require(failure as? CurlewError)
            #expect(error.code == .operationFailed)
            #expect(error.underlying as? MissingValue == MissingValue(name: "id"))
        }
    }

    /// An accessory around a batch learns what went wrong: the code of the first member that
    /// failed (a 404 here), not a generic transport failure.
    @Test func aBatchsOutcomeCarriesItsFirstFailedMembersCode() async throws {
        try await withLoopback(router: Self.router) { server, _, _ in
            let recorder = OutcomeRecorder()
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, accessories: [recorder]))
            let batch = await client.batch([Answer(path: "ok"), Answer(path: "missing"), Answer(path: "ok")])
            #expect(batch.failures.map(\.index) == [1])
            guard case .failure(let failure) = recorder.last else {
                Issue.record("the batch's outcome was a success")
                return
            }
            let error = try #require(failure as? CurlewError)
            #expect(error.code == .unacceptableStatus)
            #expect(error.status?.code == 404)
            #expect(error.message.hasPrefix("1 of 3 batch members failed; the first: "))
        }
    }

    /// In a fail-fast batch the members stopped by another's failure are cancelled; the outcome
    /// names the failure that stopped them, even when a cancelled member comes first.
    @Test func aFailFastBatchsOutcomeNamesTheFailureNotACancelledMember() async throws {
        try await withLoopback(router: Self.router) { server, _, _ in
            let recorder = OutcomeRecorder()
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, accessories: [recorder]))
            let batch = await client.batch(
                [Answer(path: "slow"), Answer(path: "missing")], options: BatchOptions(failsFast: true, maximumConcurrency: 2))
            #expect(batch.failures.map(\.index) == [0, 1])
            #expect(batch.results[0].isCancellation)
            guard case .failure(let failure) = recorder.last else {
                Issue.record("the batch's outcome was a success")
                return
            }
            let error = try #require(failure as? CurlewError)
            #expect(error.code == .unacceptableStatus)
            #expect(error.message.hasPrefix("2 of 2 batch members failed; the first: "))
        }
    }
}
