import Curlew
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// `GET /slow?id=N` — the server holds each for a few milliseconds.
struct SlowRequest: Endpoint {
    typealias Response = String
    var id: Int
    var queue: String?
    var priority: QueuePriority = .normal
    var route = "slow"
    var path: String { route }
    var options: RequestOptions { RequestOptions(queue: queue, priority: priority) }
    var query: [URLQueryItem] { [URLQueryItem(name: "id", value: String(id))] }
}

/// Records the order in which ids reached the server.
let slowHandler: @Sendable (ServerRequest) async -> ServerResponse = { request in
    try? await Task.sleep(for: .milliseconds(3))
    return .text(request.queryValue("id") ?? "?")
}

@Suite("QueueActor against a loopback server")
struct QueueTests {
    func makeClient(_ server: LoopbackServer, _ transport: CurlTransport, limits: [String: Int]) -> (APIClient, QueueActor) {
        let queues = QueueActor(limits: limits)
        return (APIClient(baseURL: server.baseURL, transport: transport, queues: queues), queues)
    }

    @Test(arguments: [1, 2])
    func aQueueNeverExceedsItsLimit(limit: Int) async throws {
        try await withLoopback(handler: slowHandler) { server, _, transport in
            let (client, _) = makeClient(server, transport, limits: ["q": limit])
            let count = limit == 1 ? 60 : 200
            try await withThrowingTaskGroup(of: Void.self) { group in
                for id in 0..<count {
                    group.addTask {
                        let answer = try await client.send(SlowRequest(id: id, queue: "q"))
                        #expect(answer == String(id))
                    }
                }
                try await group.waitForAll()
            }
            #expect(server.requestCount == count)
            #expect(server.peakInFlight(path: "/slow") == limit)
        }
    }

    @Test func fifoWithinAPriorityAndPriorityAcross() async throws {
        try await withLoopback(handler: slowHandler) { server, client, _ in
            let queues = client.queues
            await queues.hold("ordered")
            var tasks: [Task<String, any Error>] = []
            for id in 0..<9 {
                // ids 0,3,6 low; 1,4,7 normal; 2,5,8 high — each arrives after the one before.
                let priority: QueuePriority = [.low, .normal, .high][id % 3]
                tasks.append(Task { try await client.send(SlowRequest(id: id), queue: "ordered", priority: priority) })
                #expect(await eventually { await queues.status(of: "ordered").waiting == id + 1 })
            }
            await queues.resume("ordered")
            for task in tasks { _ = try await task.value }
            let order = server.requests.compactMap { $0.queryValue("id").flatMap(Int.init) }
            #expect(order == [2, 5, 8, 1, 4, 7, 0, 3, 6])
        }
    }

    @Test func thousandSubmissionsAcrossThreeQueuesNothingLostOrDuplicated() async throws {
        let limits = ["a": 1, "b": 3, "c": 8]
        try await withLoopback(handler: { request in
            try? await Task.sleep(for: .milliseconds(1))
            return .text(request.queryValue("id") ?? "?")
        }) { server, _, transport in
            let (client, _) = makeClient(server, transport, limits: limits)
            let names = ["a", "b", "c"]
            try await withThrowingTaskGroup(of: Void.self) { group in
                for id in 0..<1_000 {
                    let name = names[id % 3]
                    group.addTask {
                        let answer = try await client.send(SlowRequest(id: id, queue: name, route: "q/\(name)"))
                        #expect(answer == String(id))
                    }
                }
                try await group.waitForAll()
            }
            let ids = server.requests.compactMap { $0.queryValue("id").flatMap(Int.init) }
            #expect(ids.count == 1_000)
            #expect(Set(ids) == Set(0..<1_000))
            for name in names {
                #expect(server.requests(path: "/q/\(name)").count == (name == "a" ? 334 : 333))
                #expect(server.peakInFlight(path: "/q/\(name)") <= limits[name] ?? 0)
            }
            #expect(server.peakInFlight(path: "/q/a") == 1)
        }
    }

    @Test func holdThenResumeRunsEverythingInOrder() async throws {
        try await withLoopback(handler: slowHandler) { server, client, _ in
            await client.queues.hold("login")
            var tasks: [Task<String, any Error>] = []
            for id in 0..<10 {
                tasks.append(Task { try await client.send(SlowRequest(id: id), queue: "login") })
                #expect(await eventually { await client.queues.status(of: "login").waiting == id + 1 })
            }
            try await Task.sleep(for: .milliseconds(50))
            #expect(server.requestCount == 0)
            await client.queues.resume("login")
            for (id, task) in tasks.enumerated() { #expect(try await task.value == String(id)) }
            #expect(server.requests.compactMap { $0.queryValue("id").flatMap(Int.init) } == Array(0..<10))
        }
    }

    @Test func holdThenCancelHeldFailsEveryWaiterAndSendsNothing() async throws {
        try await withLoopback(handler: slowHandler) { server, client, _ in
            await client.queues.hold("login")
            let tasks = (0..<10).map { id in Task { try await client.send(SlowRequest(id: id), queue: "login") } }
            #expect(await eventually { await client.queues.status(of: "login").waiting == 10 })
            await client.queues.cancelHeld("login")
            var cancelled = 0
            for task in tasks {
                if case .failure(let error) = await task.result, error is CancellationError { cancelled += 1 }
            }
            #expect(cancelled == 10)
            #expect(server.requestCount == 0)
            #expect(await client.queues.status(of: "login") == (0, 0, false))
        }
    }

    @Test func cancelledWaitersDoNotConsumeSlots() async throws {
        try await withLoopback(handler: slowHandler) { server, client, _ in
            await client.queues.hold("q")
            var tasks: [Task<String, any Error>] = []
            for id in 0..<10 {
                tasks.append(Task { try await client.send(SlowRequest(id: id), queue: "q") })
                #expect(await eventually { await client.queues.status(of: "q").waiting == id + 1 })
            }
            for id in stride(from: 0, to: 10, by: 2) { tasks[id].cancel() }
            #expect(await eventually { await client.queues.status(of: "q").waiting == 5 })
            await client.queues.resume("q")
            var succeeded: [Int] = []
            var cancelled = 0
            for (id, task) in tasks.enumerated() {
                switch await task.result {
                case .success: succeeded.append(id)
                case .failure(let error): if error is CancellationError { cancelled += 1 }
                }
            }
            #expect(succeeded == [1, 3, 5, 7, 9])
            #expect(cancelled == 5)
            #expect(server.requests.compactMap { $0.queryValue("id").flatMap(Int.init) } == [1, 3, 5, 7, 9])
        }
    }

    @Test func waitUntilIdleAndTheDrainedEvent() async throws {
        try await withLoopback(handler: slowHandler) { server, client, _ in
            let queues = client.queues
            let events = Task {
                for await event in queues.events where event.kind == .queueDrained && event.queue == "images" { return true }
                return false
            }
            for id in 0..<6 {
                Task { _ = try await client.send(SlowRequest(id: id), queue: "images") }
            }
            #expect(await eventually { await queues.status(of: "images").waiting > 0 })
            await queues.waitUntilIdle("images")
            #expect(server.requestCount == 6)
            #expect(await events.value)
        }
    }

    @Test func raisingTheLimitAdmitsWaitingWork() async throws {
        try await withLoopback(handler: { request in
            await request.connection.closed()
            return .text("")
        }) { server, client, _ in
            let tasks = (0..<3).map { id in Task { try await client.send(SlowRequest(id: id), queue: "grow") } }
            await waitForRequests(server, count: 1)
            #expect(await client.queues.status(of: "grow").waiting == 2)
            await client.queues.setLimit(3, for: "grow")
            await waitForRequests(server, count: 3)
            #expect(server.requestCount == 3)
            for task in tasks { task.cancel() }
        }
    }

    @Test func unnamedRequestsAreNotLimited() async throws {
        try await withLoopback(handler: slowHandler) { server, client, _ in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for id in 0..<16 { group.addTask { _ = try await client.send(SlowRequest(id: id)) } }
                try await group.waitForAll()
            }
            #expect(server.peakInFlight(path: "/slow") > 1)
        }
    }
}
