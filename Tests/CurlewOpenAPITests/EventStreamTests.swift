import Curlew
import CurlewOpenAPI
import Foundation
import OpenAPIRuntime
import Synchronization
import Testing

/// A count shared by tasks (its lock guards it).
final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}

@Suite("CurlewTransport: many server-sent-event streams")
struct EventStreamTests {
    /// Waits (bounded: 60 s) until `condition` holds; `false` if it never did. A bound, not a
    /// timing threshold: opening 200 streams in a debug build on a loaded machine takes a while.
    func waitUntil(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<6_000 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    /// 200 event streams on one client and one host, each held open by the server after its
    /// first event; 50 ordinary calls then run while all 200 are open — none waits for a stream,
    /// since the engine puts no cap on a host's connections — and afterwards every stream
    /// delivers its second event. The calls' latencies are printed, not judged.
    @Test("200 open SSE streams: 50 ordinary calls succeed meanwhile, and every stream then delivers its next event")
    func manyStreamsDoNotStarveCalls() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        let api = APIClient(configuration: ClientConfiguration(baseURL: store.server.baseURL))
        let client = Client(serverURL: try store.serverURL, transport: CurlewTransport(client: api))
        let streams = 200
        let calls = 50
        let opened = Counter()
        let received = try await withThrowingTaskGroup(of: [String].self) { group in
            for _ in 0..<streams {
                group.addTask {
                    let body = try await client.streamEvents().ok.body.textEventStream
                    var events: [String] = []
                    for try await event in body.asDecodedServerSentEvents() {
                        events.append(event.data ?? "")
                        if events.count == 1 { opened.increment() }
                        if events.count == 2 { break }
                    }
                    return events
                }
            }
            let allOpen = await waitUntil { opened.value == streams }
            #expect(allOpen, "\(opened.value) of \(streams) streams opened")
            #expect(store.server.inFlight(path: "/v1/events") == streams)

            let clock = ContinuousClock()
            let answers = try await withThrowingTaskGroup(of: (id: Int64, latency: Duration).self) { ordinary in
                for id in 1...calls {
                    ordinary.addTask {
                        let start = clock.now
                        let pet = try await client.getPet(path: .init(petId: id)).ok.body.json
                        return (pet.id, clock.now - start)
                    }
                }
                return try await ordinary.reduce(into: []) { $0.append($1) }
            }
            #expect(answers.map(\.id).sorted() == (1...Int64(calls)).map { $0 })
            // The streams were open all along.
            #expect(store.server.inFlight(path: "/v1/events") == streams)
            #expect(store.closedWhileHeld.isEmpty)
            // The calls had connections of their own beside the streams' (no per-host cap).
            #expect(store.server.peakOpenConnections > streams)
            let latencies = answers.map(\.latency).sorted()
            print("CurlewOpenAPI: \(calls) calls beside \(streams) open SSE streams: median \(latencies[latencies.count / 2]), slowest \(latencies[latencies.count - 1])")

            store.eventGate.open()
            return try await group.reduce(into: []) { $0.append($1) }
        }
        #expect(received.count == streams)
        #expect(received.filter { $0 == [#"{"pet":1}"#, #"{"pet":2}"#] }.count == streams)
    }
}
