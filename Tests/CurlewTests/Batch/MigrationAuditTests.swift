import Curlew
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

/// What httpbin's `/anything` echoes back.
struct BinEcho: Decodable, Sendable {
    var url: String
    var method: String
    var args: [String: String]
    var json: JSONValue?
    var form: [String: String]?
}

/// Any httpbin path, decoded as its `/anything` echo.
struct BinCall: Endpoint {
    typealias Response = BinEcho
    var method: HTTPRequest.Method = .get
    var path: String
    var query: [URLQueryItem] = []
    var parameters: [String: ParameterValue] = [:]
    var parameterEncoding: ParameterEncoding = .json
}

/// Why a chain step could not build its request from the previous answer.
struct MissingField: Error, Equatable {
    var name: String
}

/// LCNetwork's batch and chain requests, Monkey's `MKBatchRequest` / `MKChainRequest`
/// (`failedRequests`, "stops at the first failure"), as a team porting them would check them.
@Suite("Migration audit: batches and chains", .timeLimit(.minutes(1)))
struct MigrationBatchAuditTests {
    func httpbinClient() throws -> APIClient {
        APIClient(configuration: ClientConfiguration(baseURL: try TestServers.httpbin()))
    }

    /// MKBatchRequest's `failedRequests` against a real server: every result at its input index,
    /// the failures with their statuses, the successes decoded.
    @Test func aBatchAgainstHttpbinKeepsInputOrderAndNamesEachFailure() async throws {
        let client = try httpbinClient()
        let requests = [
            BinCall(path: "anything/0"), BinCall(path: "status/500"), BinCall(path: "anything/2", query: [URLQueryItem(name: "k", value: "v")]),
            BinCall(path: "status/404"),
        ]
        let batch = await client.batch(requests)
        #expect(batch.results.count == 4)
        #expect(batch.values.map { URL(string: $0.url)?.path } == ["/anything/0", "/anything/2"])
        #expect(batch.values.last?.args == ["k": "v"])
        #expect(batch.failures.map(\.index) == [1, 3])
        #expect(batch.failedRequests.map(\.path) == ["status/500", "status/404"])
        #expect(batch.failures.map { ($0.error as? CurlewError)?.code } == [.unacceptableStatus, .unacceptableStatus])
        #expect(batch.failures.map { ($0.error as? CurlewError)?.status?.code } == [500, 404])
        #expect(!batch.allSucceeded)
    }

    /// YTKNetwork's and LCNetwork's batch: one failure stops the others. With `failsFast` the
    /// failing member keeps its error, the running ones are abandoned and the one not started yet
    /// is never sent.
    @Test func aFailFastBatchStopsTheOthersLikeYTKBatchRequest() async throws {
        let gates = AuditGates()
        gates.open("now")
        try await withLoopback(handler: gates.handler) { server, client, _ in
            let requests = [AuditPath(path: "hold/a"), AuditPath(path: "fail/now"), AuditPath(path: "c")]
            let batch = await client.batch(requests, options: BatchOptions(failsFast: true, maximumConcurrency: 2))
            #expect(!batch.allSucceeded)
            #expect(batch.failures.map(\.index) == [0, 1, 2])
            #expect(batch.results[0].isCancellation)
            #expect((batch.failures[1].error as? CurlewError)?.status?.code == 500)
            #expect(batch.results[2].isCancellation)
            #expect(server.requests(path: "/c").isEmpty)
            #expect(await eventually { server.disconnectsDuringResponse == 1 })
        }
    }

    /// A cancelled batch with a concurrency cap: the running member is abandoned and the ones
    /// that had not started are never sent; each member is reported once, as `CancellationError`.
    @Test func cancellingACappedBatchNeverSendsTheMembersThatHadNotStarted() async throws {
        try await withLoopback(handler: AuditGates().handler) { server, client, _ in
            let reported = Counter()
            let requests = [AuditPath(path: "hold/a"), AuditPath(path: "b"), AuditPath(path: "c")]
            let batch = Task {
                await client.batch(requests, options: BatchOptions(maximumConcurrency: 1)) { index, _ in reported.add(index) }
            }
            #expect(await eventually { server.inFlight(path: "/hold/a") == 1 })
            batch.cancel()
            let results = await batch.value.results
            #expect(results.count == 3)
            for result in results {
                guard case .failure(let error) = result else {
                    Issue.record("expected cancellation, got \(result)")
                    continue
                }
                #expect(error is CancellationError)
            }
            #expect(reported.indices.sorted() == [0, 1, 2])
            #expect(server.requests.map(\.path) == ["/hold/a"])
        }
    }

    /// A batch deadline with a concurrency cap: the finished member keeps its value, the running
    /// one and the one that never started fail with `.totalTimeout` at stage `.deadline`, and the
    /// one that never started was never sent.
    @Test func aBatchDeadlineTimesOutRunningAndUnstartedMembersAndSendsNoMore() async throws {
        try await withLoopback(handler: AuditGates().handler) { server, client, _ in
            let batch = await client.batch(
                [AuditPath(path: "first"), AuditPath(path: "hold/forever"), AuditPath(path: "third")],
                options: BatchOptions(maximumConcurrency: 1, deadline: .seconds(3)))
            let value1 = try batch.results[0].get()
            #expect(value1 == "/first")
            for result in batch.results.dropFirst() {
                guard case .failure(let error as CurlewError) = result else {
                    Issue.record("expected the batch deadline, got \(result)")
                    continue
                }
                #expect(error.code == .totalTimeout)
                #expect(error.stage == .deadline)
            }
            #expect(batch.failedRequests.map(\.path) == ["hold/forever", "third"])
            #expect(server.requests(path: "/first").count == 1)
            #expect(server.requests(path: "/third").isEmpty)
        }
    }

    /// A chain whose second and third steps are built from the previous answers, against httpbin:
    /// the JSON posted first comes back and drives the next URLs.
    @Test func aChainAgainstHttpbinBuildsEachStepFromThePreviousAnswer() async throws {
        let client = try httpbinClient()
        let finished = Counter()
        let avatar =
            try await client
            .chain(BinCall(method: .post, path: "anything/login", parameters: ["userID": 7]), name: "login", onComplete: { _ in finished.add(1) })
            .then("profile", onComplete: { _ in finished.add(2) }) { login in
                guard let id = login.json?["userID"]?.intValue else { throw MissingField(name: "userID") }
                return BinCall(path: "anything/profile", query: [URLQueryItem(name: "user", value: String(id))])
            }
            .then("avatar", onComplete: { _ in finished.add(3) }) { profile in
                guard let user = profile.args["user"] else { throw MissingField(name: "user") }
                return BinCall(path: "anything/avatar/\(user)")
            }
            .run()
        #expect(avatar.method == "GET")
        #expect(URL(string: avatar.url)?.path == "/anything/avatar/7")
        #expect(finished.indices == [1, 2, 3])
    }

    /// A step that cannot build its request from the previous answer stops the chain there:
    /// nothing more is sent, the stage names the step, the earlier value and the step's own error
    /// are kept.
    @Test func aStepThatCannotBuildItsRequestStopsTheChainUnsent() async throws {
        try await withLoopback(handler: AuditGates().handler) { server, client, _ in
            let chain =
                client
                .chain(AuditPath(path: "first"), name: "first")
                .then("second") { (previous: String) -> AuditPath in
                    guard previous == "/expected" else { throw MissingField(name: "expected") }
                    return AuditPath(path: "second")
                }
                .then("third") { _ in AuditPath(path: "third") }
            let error = await #expect(throws: CurlewError.self) { _ = try await chain.run() }
            #expect(error?.stage == .chainStep(2, name: "second"))
            #expect(error?.completedSteps.count == 1)
            #expect(error?.completedSteps.first as? String == "/first")
            #expect(error?.underlying as? MissingField == MissingField(name: "expected"))
            #expect(error?.message.hasPrefix("chain step 2 \"second\" failed after 1 completed step(s): ") == true)
            #expect(server.requests.map(\.path) == ["/first"])
        }
    }
}

extension Result {
    /// Whether this is a failure with `CancellationError`.
    var isCancellation: Bool {
        if case .failure(let error) = self { return error is CancellationError }
        return false
    }
}
