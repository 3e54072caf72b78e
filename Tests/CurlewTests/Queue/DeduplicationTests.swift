import Curlew
import Foundation
import HTTPTypes
import LoopbackServer
import Synchronization
import Testing
import TestSupport

@Suite("In-flight deduplication")
struct DeduplicationTests {
    /// Holds `/gate` responses until the test opens the gate.
    final class Gate: Sendable {
        private let open = Mutex(false)
        func release() { open.withLock { $0 = true } }
        var isOpen: Bool { open.withLock { $0 } }
    }

    func withDedupServer(_ body: (LoopbackServer, APIClient, Gate) async throws -> Void) async throws {
        let gate = Gate()
        let server = try await LoopbackServer.start { request in
            while !gate.isOpen, !request.connection.isClosed { try? await Task.sleep(for: .milliseconds(5)) }
            return .text("shared \(request.queryValue("v") ?? "")")
        }
        let transport = CurlTransport()
        let client = APIClient(baseURL: server.baseURL, transport: DeduplicatingTransport(transport))
        do { try await body(server, client, gate) } catch {
            await transport.shutdown()
            await server.shutdown()
            throw error
        }
        await transport.shutdown()
        await server.shutdown()
    }

    @Test func identicalGetsShareOneTransfer() async throws {
        try await withDedupServer { server, client, gate in
            let tasks = (0..<20).map { _ in Task { try await client.send(Send(path: "gate", query: [URLQueryItem(name: "v", value: "1")])) } }
            await waitForRequests(server, count: 1)
            try await Task.sleep(for: .milliseconds(50))
            gate.release()
            for task in tasks { #expect(try await task.value == "shared 1") }
            #expect(server.requestCount == 1)
        }
    }

    @Test func differentCredentialsOrMethodsAreNotShared() async throws {
        try await withDedupServer { server, client, gate in
            gate.release()
            async let a = client.send(Send(path: "gate", headers: ["Authorization": "Bearer A"]))
            async let b = client.send(Send(path: "gate", headers: ["Authorization": "Bearer B"]))
            async let c = client.send(Send(method: .post, path: "gate", body: .text("x")))
            _ = try await (a, b, c)
            #expect(server.requestCount == 3)
        }
    }

    @Test func cancellingNineteenCallersStillDeliversToTheTwentieth() async throws {
        try await withDedupServer { server, client, gate in
            let tasks = (0..<20).map { _ in Task { try await client.send(Send(path: "gate")) } }
            await waitForRequests(server, count: 1)
            try await Task.sleep(for: .milliseconds(50))
            for task in tasks.dropLast() { task.cancel() }
            var cancelled = 0
            for task in tasks.dropLast() {
                if case .failure(let error) = await task.result, error is CancellationError { cancelled += 1 }
            }
            #expect(cancelled == 19)
            gate.release()
            #expect(try await tasks[19].value == "shared ")
            #expect(server.requestCount == 1)
            #expect(server.disconnectsDuringResponse == 0)
        }
    }

    @Test func cancellingEveryCallerCancelsTheTransfer() async throws {
        try await withDedupServer { server, client, _ in
            let tasks = (0..<3).map { _ in Task { try await client.send(Send(path: "gate")) } }
            await waitForRequests(server, count: 1)
            for task in tasks { task.cancel() }
            for task in tasks { _ = await task.result }
            #expect(await eventually { server.disconnectsDuringResponse == 1 })
        }
    }

    /// A caller with stricter transfer settings never receives an answer fetched under another
    /// caller's weaker ones: here a smaller body limit (the same holds for TLS verification, pins,
    /// proxies and timeouts). Before, the second call shared the first's transfer and got the
    /// 13-byte body past its 4-byte limit.
    @Test func callsWithOtherTransferOptionsAreNotShared() async throws {
        try await withDedupServer { server, client, gate in
            let roomy = Task { try await client.send(Send(path: "gate", query: [URLQueryItem(name: "v", value: "two")])) }
            await waitForRequests(server, count: 1)
            let strict = Task {
                try await client.send(Send(path: "gate", query: [URLQueryItem(name: "v", value: "two")])) { $0.maximumBodySize = 4 }
            }
            await waitForRequests(server, count: 2)
            let twin = Task {
                try await client.send(Send(path: "gate", query: [URLQueryItem(name: "v", value: "two")])) { $0.maximumBodySize = 4 }
            }
            try await Task.sleep(for: .milliseconds(50))
            gate.release()
            let answer = try await roomy.value
            #expect(answer == "shared two")
            for task in [strict, twin] {
                let error = await #expect(throws: CurlewError.self) { try await task.value }
                #expect(error?.code == .bodyTooLarge)
            }
            #expect(server.requestCount == 2, "the two strict calls share one transfer; the roomy one has its own")
        }
    }
}
