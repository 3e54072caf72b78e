import Curlew
import CurlewTesting
import Foundation
import Testing
import TestSupport

/// A client's event streams end when the client is released: a task reading them finishes
/// instead of waiting for ever.
@Suite("Event streams end with their client", .timeLimit(.minutes(1)))
struct EventStreamEndTests {
    @Test func aReleasedClientsEventStreamsEnd() async throws {
        var client: APIClient? = APIClient(baseURL: "https://api.test", transport: MockTransport { .text("ok", for: $0) })
        let events = try #require(client).events
        let reader = Task {
            var seen = 0
            for await _ in events { seen += 1 }
            return seen
        }
        _ = try await client?.send(Send(path: "one"))
        client = nil
        let seen = await reader.value
        #expect(seen >= 2, "started and finished, at least")
    }
}
