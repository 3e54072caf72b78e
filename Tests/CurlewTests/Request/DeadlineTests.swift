@testable import Curlew
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

@Suite("Deadlines that flow (withDeadline)")
struct DeadlineTests {
    /// Answers at once with the path.
    static let echoPath: @Sendable (ServerRequest) async -> ServerResponse = { request in .text(request.path) }

    @Test func aCallStartingAfterItsDeadlineFailsAtOnceAndSendsNothing() async throws {
        try await withLoopback(handler: Self.echoPath) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) {
                try await withDeadline(at: .now - .milliseconds(1)) { try await client.send(Numbered(index: 1)) }
            }
            #expect(error?.code == .deadlineExceeded)
            #expect(error?.stage == .deadline)
            // A later call without a deadline is the only request the server ever saw.
            let answer = try await client.send(Numbered(index: 2))
            #expect(answer == "/n/2")
            #expect(server.requests.map(\.uri) == ["/n/2"])
        }
    }

    @Test func theDeadlineCutsOffTheExchangeAndTheServerSeesTheDisconnect() async throws {
        var options = TransferOptions()
        options.totalTimeout = .seconds(120)
        try await withLoopback(transferOptions: options, handler: FailureTests.hold) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) {
                try await withDeadline(in: .milliseconds(300)) { try await client.send(Numbered(index: 1)) }
            }
            #expect(error?.code == .deadlineExceeded)
            #expect(error?.stage == .deadline)
            #expect(server.requestCount == 1)
            #expect(await eventually { server.disconnectsDuringResponse == 1 })
        }
    }

    @Test func aShorterTimeoutOfTheCallStaysATotalTimeout() async throws {
        try await withLoopback(handler: FailureTests.hold) { _, client, _ in
            let error = await #expect(throws: CurlewError.self) {
                try await withDeadline(in: .seconds(120)) {
                    try await client.send(Numbered(index: 1)) { $0.totalTimeout = .milliseconds(200) }
                }
            }
            #expect(error?.code == .totalTimeout)
        }
    }

    @Test func aRetryThatWouldEndAfterTheDeadlineIsNotMade() async throws {
        try await withLoopback(handler: { _ in
            ServerResponse(status: 503, headers: [("Retry-After", "90")], body: Array("busy".utf8))
        }) { server, _, transport in
            let retry = RetryMiddleware(maximumAttempts: 5, maximumDelay: .seconds(120), maximumTotalTime: .seconds(240))
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [retry]), transport: transport)
            let error = await #expect(throws: CurlewError.self) {
                // Long enough for the first answer however loaded the machine is (10 s was not, once).
                try await withDeadline(in: .seconds(30)) { try await client.send(Numbered(index: 1)) }
            }
            #expect(error?.code == .unacceptableStatus)
            #expect(error?.status?.code == 503)
            #expect(server.requestCount == 1)
        }
    }

    @Test func theHeaderTellsTheServerTheTimeLeftOnlyUnderADeadline() async throws {
        try await withLoopback(handler: Self.echoPath) { server, _, transport in
            var configuration = ClientConfiguration(baseURL: server.baseURL)
            configuration.deadlineHeader = HTTPField.Name("grpc-timeout")
            let client = APIClient(configuration: configuration, transport: transport)
            // Long enough for the answer however loaded the machine is (10 s was not, once).
            _ = try await withDeadline(in: .seconds(30)) { try await client.send(Numbered(index: 1)) }
            _ = try await client.send(Numbered(index: 2))
            let sent = server.requests.map { $0.header("grpc-timeout") }
            #expect(sent.count == 2)
            let first = try #require(sent.first ?? nil)
            #expect(first.hasSuffix("m"))
            let milliseconds = try #require(Int(first.dropLast()))
            #expect(milliseconds > 0 && milliseconds <= 30_000)
            #expect(sent.last == .some(nil))
        }
    }

    @Test func anInnerDeadlineCanOnlyShortenTheBudget() async {
        let outer = ContinuousClock.now + .seconds(10)
        await withDeadline(at: outer) {
            await withDeadline(in: .seconds(60)) { #expect(CallDeadline.current == outer) }
            let inner = ContinuousClock.now + .seconds(1)
            await withDeadline(at: inner) { #expect(CallDeadline.current == inner) }
            #expect(CallDeadline.current == outer)
        }
        #expect(CallDeadline.current == nil)
    }

    @Test func capAndTranslate() throws {
        let now = ContinuousClock.now
        var request = PreparedRequest(method: .get, url: "http://127.0.0.1:1/x")
        request.options.totalTimeout = .seconds(60)
        #expect(try CallDeadline.cap(&request, by: now + .milliseconds(250), now: now, header: HTTPField.Name("grpc-timeout")))
        #expect(request.options.totalTimeout == .milliseconds(250))
        #expect(request.headers[HTTPField.Name("grpc-timeout")!] == "250m")
        var own = PreparedRequest(method: .get, url: "http://127.0.0.1:1/x")
        own.options.totalTimeout = .milliseconds(100)
        #expect(try !CallDeadline.cap(&own, by: now + .seconds(1), now: now, header: HTTPField.Name("grpc-timeout")))
        #expect(own.options.totalTimeout == .milliseconds(100))
        // The client waits 100 ms for this attempt, not the second the deadline has left.
        #expect(own.headers[HTTPField.Name("grpc-timeout")!] == "100m")
        #expect(throws: CurlewError.self) { try CallDeadline.cap(&own, by: now, now: now, header: nil) }
        let reset = CurlewError(code: .connectionReset, message: "reset")
        #expect(CallDeadline.translate(reset).code == .connectionReset)
        #expect(CallDeadline.translate(CurlewError(code: .totalTimeout, message: "t")).code == .deadlineExceeded)
        #expect(CallDeadline.grpcTimeout(.seconds(200_000)) == "200000S")
    }
}
