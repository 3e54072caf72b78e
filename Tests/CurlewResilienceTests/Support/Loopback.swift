import Curlew
import Foundation
import HTTPTypes
import LoopbackServer
import Testing

// The helpers of CurlewTests' Support/Loopback.swift that these tests use (a test target sees
// no other test target's code).

/// Starts a loopback server and a client on its own `CurlTransport`, runs `body`, then shuts
/// both down — also when `body` throws.
func withLoopback(
    transferOptions: TransferOptions = TransferOptions(),
    transportConfiguration: CurlTransport.Configuration = .init(),
    handler: @escaping @Sendable (ServerRequest) async -> ServerResponse,
    _ body: (LoopbackServer, APIClient, CurlTransport) async throws -> Void
) async throws {
    let server = try await LoopbackServer.start(handler: handler)
    let transport = CurlTransport(configuration: transportConfiguration)
    let client = APIClient(
        configuration: ClientConfiguration(baseURL: server.baseURL, transferOptions: transferOptions),
        transport: transport)
    do {
        try await body(server, client, transport)
    } catch {
        await transport.shutdown()
        await server.shutdown()
        throw error
    }
    await transport.shutdown()
    await server.shutdown()
}

/// Same as ``withLoopback(transferOptions:transportConfiguration:handler:_:)`` with a router.
func withLoopback(
    transferOptions: TransferOptions = TransferOptions(),
    transportConfiguration: CurlTransport.Configuration = .init(),
    router: LoopbackRouter,
    _ body: (LoopbackServer, APIClient, CurlTransport) async throws -> Void
) async throws {
    try await withLoopback(
        transferOptions: transferOptions, transportConfiguration: transportConfiguration,
        handler: { await router.handle($0) }, body)
}

/// Polls `condition` every 10 ms until it holds; returns whether it became true.
/// For waiting on server-side effects (a disconnect noticed), never for timing assertions: it
/// returns as soon as the effect happened, and `seconds` is only a guard against a test hanging
/// forever when it never does (60 s by default, so a machine slowed down by a sanitizer or by a
/// busy build waits for the effect instead of failing; see scripts/sanitize.sh).
func eventually(within seconds: Double = 60, _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return await condition()
}

/// Waits until the server has received `count` requests (they are recorded before handlers run).
func waitForRequests(_ server: LoopbackServer, count: Int) async {
    _ = await eventually { server.requestCount >= count }
}

/// A call to `/n/<index>` whose answer is the body as text.
struct Numbered: Endpoint {
    typealias Response = String
    var index: Int
    var path: String { "n/\(index)" }
}

/// A call of any method, path, query, headers and body whose answer is the body as text.
struct Send: Endpoint {
    typealias Response = String
    var method: HTTPRequest.Method = .get
    var path: String
    var query: [URLQueryItem] = []
    var headers: [String: String] = [:]
    var body: RequestPayload? = nil
}
