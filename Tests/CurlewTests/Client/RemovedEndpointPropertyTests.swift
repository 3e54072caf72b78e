import Curlew
import Foundation
import LoopbackServer
import Testing

/// Endpoint properties from before `RequestOptions` took them over are never read. The compiler
/// warns about a declaration with the old type (a deprecated conformance of that type to
/// `_RemovedEndpointProperty` becomes the endpoint's associated type), and the client catches
/// them when it first sees the type. Tests are debug builds, where the call fails.
///
/// The old endpoints are declared deprecated so the compiler's warning stays out of the test
/// build; the tests reach them through `OldEndpoints`, a deprecated witness of a plain
/// requirement (no warning at the use either).
@Suite("Removed endpoint properties")
struct RemovedEndpointPropertyTests {
    /// The old way to queue a call.
    @available(*, deprecated, message: "declares a removed endpoint property on purpose")
    struct OldQueued: Endpoint {
        typealias Response = String
        var path: String { "queued" }
        var queueName: String? { "search" }
    }

    /// The old queue name, not optional (a type the old requirement did not catch either).
    @available(*, deprecated, message: "declares a removed endpoint property on purpose")
    struct OldPlainQueue: Endpoint {
        typealias Response = String
        var path: String { "queued" }
        var queueName: String { "images" }
    }

    /// The old login gate: silently gone, unless caught.
    @available(*, deprecated, message: "declares a removed endpoint property on purpose")
    struct OldLoginGate: Endpoint {
        typealias Response = String
        var path: String { "private" }
        let requiresAuthentication = true
    }

    /// Old middleware and skip lists, and accessories turned off.
    @available(*, deprecated, message: "declares a removed endpoint property on purpose")
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
    /// reaches `options` is used: neither is reported at run time (the compiler still warns).
    @available(*, deprecated, message: "declares a removed endpoint property on purpose")
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
        let old = (OldEndpoints.self as any OldEndpointsProviding.Type)
        let expected: [(CurlewError?, String)] = [
            (await failure { try await old.queued(client) }, "`queueName` (\"search\"): set `queue` in `options`"),
            (await failure { try await old.plainQueue(client) }, "`queueName` (\"images\"): set `queue` in `options`"),
            (await failure { try await old.loginGate(client) }, "`requiresAuthentication`: set it in `options`"),
            (await failure { try await old.everything(client) }, "`usesAccessories`: set it in `options`; `skippedMiddleware`: set it in `options`"),
            (await failure { try await client.send(ShadowedOptions()) }, "`options` (a stored Dictionary<String, String>, not RequestOptions: it hides Endpoint.options; rename it)"),
        ]
        for (error, named) in expected {
            let error = try #require(error)
            #expect(error.code == .removedEndpointProperty)
            #expect(error.stage == .configuration)
            #expect(error.message.hasSuffix("declares what Curlew no longer reads: " + named), "\(error.message)")
        }
        // Every call of such a type fails, not only the first.
        await #expect(throws: CurlewError.self) { try await old.queued(client) }
        #expect(server.requestCount == 0)
        #expect(try await old.harmless(client) == "sent")
        #expect(server.requestCount == 1)
        await server.shutdown()
    }

    /// The compiler took each declaration's old type as the endpoint's associated type — through
    /// the deprecated conformance whose message is the compile-time warning — and left the
    /// associated types of an endpoint that declares none at their default.
    @Test func theOldTypesBecomeTheAssociatedTypesTheCompilerWarnsAbout() {
        let old = (OldEndpoints.self as any OldEndpointsProviding.Type)
        let none = "_EndpointPropertyNotDeclared"
        #expect(
            old.inferredTypes == [
                ["Optional<String>", none, none, none, none],
                [none, "Bool", none, none, none],
                [none, none, "Bool", none, "Set<MiddlewareKind>"],
            ])
        #expect(Self.associatedTypes(of: ShadowedOptions.self) == Array(repeating: none, count: 5))
    }

    /// The five associated types' names, in the order of the removed properties.
    static func associatedTypes<R: Endpoint>(of type: R.Type) -> [String] {
        [
            String(describing: R._QueueName.self), String(describing: R._RequiresAuthentication.self), String(describing: R._UsesAccessories.self),
            String(describing: R._Middleware.self), String(describing: R._SkippedMiddleware.self),
        ]
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

/// Sends the deprecated old endpoints without a warning at the use.
protocol OldEndpointsProviding {
    typealias Call = @Sendable (APIClient) async throws -> String
    static var queued: Call { get }
    static var plainQueue: Call { get }
    static var loginGate: Call { get }
    static var everything: Call { get }
    static var harmless: Call { get }
    /// The associated types of `OldQueued`, `OldLoginGate` and `OldEverything`.
    static var inferredTypes: [[String]] { get }
}

enum OldEndpoints: OldEndpointsProviding {
    typealias Old = RemovedEndpointPropertyTests
    @available(*, deprecated, message: "declares a removed endpoint property on purpose")
    static var queued: Call { { try await $0.send(Old.OldQueued()) } }
    @available(*, deprecated, message: "declares a removed endpoint property on purpose")
    static var plainQueue: Call { { try await $0.send(Old.OldPlainQueue()) } }
    @available(*, deprecated, message: "declares a removed endpoint property on purpose")
    static var loginGate: Call { { try await $0.send(Old.OldLoginGate()) } }
    @available(*, deprecated, message: "declares a removed endpoint property on purpose")
    static var everything: Call { { try await $0.send(Old.OldEverything()) } }
    @available(*, deprecated, message: "declares a removed endpoint property on purpose")
    static var harmless: Call { { try await $0.send(Old.HarmlessDefaults()) } }
    @available(*, deprecated, message: "declares a removed endpoint property on purpose")
    static var inferredTypes: [[String]] {
        [Old.associatedTypes(of: Old.OldQueued.self), Old.associatedTypes(of: Old.OldLoginGate.self), Old.associatedTypes(of: Old.OldEverything.self)]
    }
}
