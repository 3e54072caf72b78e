@testable import Curlew
import Foundation
import LoopbackServer
import TestSupport
import Testing

/// A queue name left blank — `$0.queue = settings.partnerQueue ?? ""`, a default queue read from an
/// empty environment variable — used to put every such call in one serial queue named "", all
/// calls of the client one at a time, without a word. It fails the call instead, unsent.
@Suite("Queue names")
struct QueueNameTests {
    @Test(arguments: ["", " ", "\t"])
    func anEmptyQueueNameFailsTheCallBeforeAnythingIsSent(_ name: String) async throws {
        try await withLoopback(handler: { request in .text(request.path) }) { server, client, transport in
            let error = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 1)) { $0.queue = name } }
            #expect(error?.code == .invalidQueueName)
            #expect(error?.level == .invalidRequest)
            #expect(error?.stage == .configuration)
            #expect(error?.message == "Numbered names the queue \"\(name)\", which is empty (nil is no queue); nothing was sent")
            let blankDefault = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, defaultQueue: name), transport: transport)
            let viaDefault = await #expect(throws: CurlewError.self) { try await blankDefault.send(Numbered(index: 2)) }
            #expect(viaDefault?.code == .invalidQueueName)
            #expect(server.requestCount == 0)
            // A named queue and no queue at all still go out.
            let named = try await client.send(Numbered(index: 3)) { $0.queue = "partner" }
            let overridden = try await blankDefault.send(Numbered(index: 4)) { $0.queue = "partner" }
            #expect([named, overridden] == ["/n/3", "/n/4"])
            #expect(server.requests.map(\.uri) == ["/n/3", "/n/4"])
        }
    }
}
