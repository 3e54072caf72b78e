@testable import Curlew
@testable import CurlewCore
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// Holds each request in the server until the test lets it answer.
private final class AnswerGate: Sendable {
    private let state = Mutex<(released: Set<Int>, waiting: [Int: CheckedContinuation<Void, Never>])>(([], [:]))

    func pass(_ index: Int) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let now = state.withLock { state -> Bool in
                if state.released.contains(index) { return true }
                state.waiting[index] = continuation
                return false
            }
            if now { continuation.resume() }
        }
    }

    func release(_ index: Int) {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.released.insert(index)
            return state.waiting.removeValue(forKey: index)
        }
        waiter?.resume()
    }
}

/// Curlew's own per-origin queue under `maximumConnectionsPerHost` (issue 31, item 2).
@Suite("Per-host queues")
struct HostQueueTests {
    @Test func callsOverTheCapWaitInOrderAndEachStartsWhenAConnectionFrees() async throws {
        let gate = AnswerGate()
        let arrivals = Mutex<[Int]>([])
        try await withLoopback(
            transportConfiguration: .init(maximumConnectionsPerHost: 2, engineCount: 1),
            handler: { request in
                let index = Int(request.path.dropFirst("/n/".count)) ?? -1
                arrivals.withLock { $0.append(index) }
                await gate.pass(index)
                return .text(String(index))
            }
        ) { server, client, transport in
            try await withThrowingTaskGroup(of: (Int, String).self) { group in
                // Submitted one at a time, each once the engine has taken the one before.
                for index in 0..<10 {
                    group.addTask { (index, try await client.send(Numbered(index: index))) }
                    let stats = transport.statistics
                    #expect(await eventually { stats.activeTransfers + stats.queuedTransfers == index + 1 })
                }
                #expect(await eventually { server.requestCount == 2 })
                #expect(transport.statistics.queuedTransfers == 8)
                #expect(transport.statistics.activeTransfers == 2)
                // Each answer frees a connection, and exactly the next call in line starts on it.
                for index in 0..<8 {
                    gate.release(index)
                    // The handler records an arrival after the server counted the request.
                    #expect(await eventually { arrivals.withLock { $0.count } == index + 3 })
                    #expect(arrivals.withLock { $0.last } == index + 2)
                    #expect(server.requestCount == index + 3)
                    #expect(transport.statistics.queuedTransfers == 7 - index)
                }
                gate.release(8)
                gate.release(9)
                var answers: [Int: String] = [:]
                for try await (index, answer) in group { answers[index] = answer }
                #expect(answers.count == 10)
                #expect(answers.allSatisfy { String($0.key) == $0.value })
            }
            // The first two start together on two connections (either may reach the server
            // first); the rest in the order they were sent.
            #expect(Set(arrivals.withLock { $0.prefix(2) }) == [0, 1])
            #expect(Array(arrivals.withLock { $0.dropFirst(2) }) == Array(2..<10))
            #expect(server.connectionsAccepted == 2)
            #expect(transport.statistics.queuedTransfers == 0)
        }
    }

    @Test func aCancelledWaitingCallLeavesTheQueue() async throws {
        let gate = AnswerGate()
        try await withLoopback(
            transportConfiguration: .init(maximumConnectionsPerHost: 1, engineCount: 1),
            handler: { request in
                let index = Int(request.path.dropFirst("/n/".count)) ?? -1
                await gate.pass(index)
                return .text(String(index))
            }
        ) { server, client, transport in
            let first = Task { try await client.send(Numbered(index: 0)) }
            #expect(await eventually { server.requestCount == 1 })
            let second = Task { try await client.send(Numbered(index: 1)) }
            #expect(await eventually { transport.statistics.queuedTransfers == 1 })
            second.cancel()
            // The client reports a cancelled call as `CancellationError`.
            await #expect(throws: CancellationError.self) { try await second.value }
            #expect(transport.statistics.queuedTransfers == 0)
            #expect(transport.statistics.activeTransfers == 1)
            gate.release(0)
            let answer = try await first.value
            #expect(answer == "0")
            #expect(server.requestCount == 1)
        }
    }

    @Test func aWaitingCallsTotalTimeoutCountsItsWait() async throws {
        let gate = AnswerGate()
        try await withLoopback(
            transportConfiguration: .init(maximumConnectionsPerHost: 1, engineCount: 1),
            handler: { request in
                let index = Int(request.path.dropFirst("/n/".count)) ?? -1
                await gate.pass(index)
                return .text(String(index))
            }
        ) { server, client, transport in
            let first = Task { try await client.send(Numbered(index: 0)) }
            #expect(await eventually { server.requestCount == 1 })
            // Only the waiting call has a short total timeout: it passes while it waits.
            let second = Task { try await client.send(Numbered(index: 1)) { $0.totalTimeout = .milliseconds(300) } }
            let error = await #expect(throws: CurlewError.self) { try await second.value }
            #expect(error?.code == .totalTimeout)
            #expect(error?.message.contains("waiting for a connection") == true)
            #expect(server.requestCount == 1)
            gate.release(0)
            _ = try? await first.value
            #expect(transport.statistics.queuedTransfers == 0)
        }
    }

    @Test func queuesAdmitReleaseRemoveAndMultiplex() {
        var queues = HostQueues<String>(cap: 2)
        let a = HostQueues<String>.origin(of: "http://a.example:8080/x")
        let b = HostQueues<String>.origin(of: "http://b.example:8080/x")
        #expect(a == HostQueues<String>.origin(of: "HTTP://user@A.example:8080/other?q"))
        #expect(a != HostQueues<String>.origin(of: "https://a.example:8080/x"))
        let r1 = queues.admit("a1", id: 1, origin: a)
        #expect(r1)
        let r2 = queues.admit("a2", id: 2, origin: a)
        #expect(r2)
        let r3 = queues.admit("a3", id: 3, origin: a)
        #expect(!r3)
        let r4 = queues.admit("a4", id: 4, origin: a)
        #expect(!r4)
        let r5 = queues.admit("a5", id: 5, origin: a)
        #expect(!r5)
        let r6 = queues.admit("b1", id: 6, origin: b)
        #expect(r6)
        #expect(queues.queuedCount == 3)
        let r7 = queues.release(a)
        #expect(r7?.transfer == "a3")
        #expect(queues.running(a) == 2)
        let r8 = queues.remove(id: 4, origin: a)
        #expect(r8 == "a4")
        let r9 = queues.remove(id: 4, origin: a)
        #expect(r9 == nil)
        #expect(queues.queuedCount == 1)
        let r10 = queues.markMultiplexing(a)
        #expect(r10.map(\.transfer) == ["a5"])
        let r11 = queues.admit("a6", id: 7, origin: a)
        #expect(r11)
        #expect(queues.running(a) == 4)
        let r12 = queues.release(b)
        #expect(r12 == nil)
        #expect(queues.running(b) == 0)
        #expect(queues.queuedCount == 0)
    }
}
