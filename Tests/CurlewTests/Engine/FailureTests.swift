import Curlew
import Foundation
import LoopbackServer
import Testing
import TestSupport

@Suite("Timeouts, limits, cancellation and shutdown")
struct FailureTests {
    /// Holds the response until the client goes away.
    static let hold: @Sendable (ServerRequest) async -> ServerResponse = { request in
        await request.connection.closed()
        return .text("too late")
    }

    @Test func cancellingTheTaskStopsTheTransferAndTheServerSeesTheDisconnect() async throws {
        try await withLoopback(handler: Self.hold) { server, client, _ in
            let task = Task { try await client.send(Numbered(index: 1)) }
            await waitForRequests(server, count: 1)
            #expect(server.requestCount == 1)
            task.cancel()
            let result = await task.result
            #expect(throws: CancellationError.self) { try result.get() }
            #expect(await eventually { server.disconnectsDuringResponse == 1 })
        }
    }

    @Test func cancellingBeforeSendingSendsNothing() async throws {
        try await withLoopback(handler: Self.hold) { server, client, _ in
            let task = Task {
                withUnsafeCurrentTask { $0?.cancel() }
                return try await client.send(Numbered(index: 1))
            }
            let result = await task.result
            if case .failure(let error) = result {
                #expect(error is CancellationError)
            } else {
                Issue.record("expected a cancellation error, got \(result)")
            }
            try await Task.sleep(for: .milliseconds(50))
            #expect(server.requestCount == 0)
        }
    }

    @Test func idleTimeout() async throws {
        var options = TransferOptions()
        options.idleTimeout = .seconds(1)
        try await withLoopback(
            transferOptions: options,
            handler: { request in
                .stream { writer in
                    try await writer.write("first chunk")
                    await request.connection.closed()
                }
            }
        ) { _, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 1)) }
            #expect(error?.code == .idleTimeout)
        }
    }

    @Test func totalTimeout() async throws {
        var options = TransferOptions()
        options.totalTimeout = .milliseconds(300)
        try await withLoopback(transferOptions: options, handler: Self.hold) { _, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 1)) }
            #expect(error?.code == .totalTimeout)
        }
    }

    @Test(arguments: [true, false])
    func bodyOverTheMaximumFails(announcesLength: Bool) async throws {
        var options = TransferOptions()
        options.maximumBodySize = 1_000
        let body = [UInt8](repeating: 65, count: 5_000)
        try await withLoopback(
            transferOptions: options,
            handler: { _ in
                if announcesLength { return ServerResponse(status: 200, body: body) }
                return .stream { writer in
                    for _ in 0..<5 { try await writer.write(Array(body[0..<1_000])) }
                }
            }
        ) { _, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 1)) }
            #expect(error?.code == .bodyTooLarge)
            #expect(error?.message.contains("1000") == true)
        }
    }

    @Test func bodyExactlyAtTheMaximumIsAccepted() async throws {
        var options = TransferOptions()
        options.maximumBodySize = 1_000
        try await withLoopback(
            transferOptions: options,
            handler: { _ in
                .stream { writer in
                    for _ in 0..<4 { try await writer.write([UInt8](repeating: 66, count: 250)) }
                }
            }
        ) { _, client, _ in
            let body = try await client.send(FetchBytes(path: "x"))
            #expect(body.count == 1_000)
        }
    }

    @Test func shutdownFailsRequestsInFlightAndLaterOnes() async throws {
        try await withLoopback(handler: Self.hold) { server, client, transport in
            let tasks = (0..<5).map { index in Task { try await client.send(Numbered(index: index)) } }
            await waitForRequests(server, count: 5)
            #expect(server.requestCount == 5)
            await transport.shutdown()
            for task in tasks {
                let result = await task.result
                if case .failure(let error as CurlewError) = result {
                    #expect(error.code == .shutdown)
                } else {
                    Issue.record("expected a shutdown error, got \(result)")
                }
            }
            let after = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 9)) }
            #expect(after?.code == .shutdown)
            await transport.shutdown()  // a second shutdown is a no-op
            #expect(await eventually { server.openConnections == 0 })
        }
    }
}
