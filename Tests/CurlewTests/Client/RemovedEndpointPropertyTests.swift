import Curlew
import Foundation
import LoopbackServer
import Testing

/// Endpoint properties from before `RequestOptions` took them over compile (Swift lets a type's
/// own member win over a deprecated requirement without a word) but are never read: the client
/// catches them when it first sees the type. Tests are debug builds, where the call fails.
@Suite("Removed endpoint properties")
struct RemovedEndpointPropertyTests {
    /// The old way to queue a call.
    struct OldQueued: Endpoint {
        typealias Response = String
        var path: String { "queued" }
        var queueName: String? { "search" }
    }

    /// The old login gate: silently gone, unless caught.
    struct OldLoginGate: Endpoint {
        typealias Response = String
        var path: String { "private" }
        let requiresAuthentication = true
    }

    /// Old middleware and skip lists, and accessories turned off.
    struct OldEverything: Endpoint {
        typealias Response = String
        var path: String { "all" }
        var usesAccessories: Bool { false }
        var skippedMiddleware: Set<MiddlewareKind> { [.authorization] }
    }

    /// A stored `options` of its own type shadows `Endpoint.options`.
    struct ShadowedOptions: Endpoint {
        typealias Response = String
        var path: String { "shadow" }
        var options: [String: String] = ["timeout": "5"]
    }

    /// Declaring an old property with its old default value changes nothing, and one whose value
    /// reaches `options` is used: neither is reported.
    struct HarmlessDefaults: Endpoint {
        typealias Response = String
        var path: String { "fine" }
        var requiresAuthentication: Bool { false }
        var queueName: String? = "fine"
        var options: RequestOptions { RequestOptions(queue: queueName) }
    }

    @Test func eachRemovedPropertyFailsTheCallBeforeAnythingIsSent() async throws {
        let server = try await LoopbackServer.start { _ in .text("sent") }
        let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL))
        let expected: [(CurlewError?, String)] = [
            (await failure { try await client.send(OldQueued()) }, "`queueName` (\"search\"): set `queue` in `options`"),
            (await failure { try await client.send(OldLoginGate()) }, "`requiresAuthentication`: set it in `options`"),
            (await failure { try await client.send(OldEverything()) }, "`usesAccessories`: set it in `options`; `skippedMiddleware`: set it in `options`"),
            (await failure { try await client.send(ShadowedOptions()) }, "`options` (a stored Dictionary<String, String>, not RequestOptions: it hides Endpoint.options; rename it)"),
        ]
        for (error, named) in expected {
            let error = try #require(error)
            #expect(error.code == .removedEndpointProperty)
            #expect(error.stage == .configuration)
            #expect(error.message.hasSuffix("declares what Curlew no longer reads: " + named), "\(error.message)")
        }
        // Every call of such a type fails, not only the first.
        await #expect(throws: CurlewError.self) { try await client.send(OldQueued()) }
        #expect(server.requestCount == 0)
        #expect(try await client.send(HarmlessDefaults()) == "sent")
        #expect(server.requestCount == 1)
        await server.shutdown()
    }

    /// The `CurlewError` a call fails with, or `nil` when it succeeds.
    private func failure(_ call: () async throws -> String) async -> CurlewError? {
        do {
            _ = try await call()
            return nil
        } catch {
            return error as? CurlewError
        }
    }
}
