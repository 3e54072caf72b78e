package import Curlew
package import Foundation
package import HTTPTypes
package import LoopbackServer

/// Starts a loopback server and a client on its own `CurlTransport`, runs `body`, then shuts
/// both down — also when `body` throws.
package func withLoopback(
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
package func withLoopback(
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
package func eventually(within seconds: Double = 60, _ condition: () async -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return await condition()
}

/// Waits until the server has received `count` requests (they are recorded before handlers run).
package func waitForRequests(_ server: LoopbackServer, count: Int) async {
    _ = await eventually { server.requestCount >= count }
}

/// A call to `/n/<index>` whose answer is the body as text.
package struct Numbered: Endpoint {
    package typealias Response = String
    package var index: Int
    package var path: String { "n/\(index)" }

    package init(index: Int) { self.index = index }
}

/// A call of any method, path, query, headers and body whose answer is the body as text.
package struct Send: Endpoint {
    package typealias Response = String
    package var method: HTTPRequest.Method
    package var path: String
    package var query: [URLQueryItem]
    package var headers: [String: String]
    package var body: RequestPayload?

    package init(
        method: HTTPRequest.Method = .get, path: String, query: [URLQueryItem] = [], headers: [String: String] = [:], body: RequestPayload? = nil
    ) {
        self.method = method
        self.path = path
        self.query = query
        self.headers = headers
        self.body = body
    }
}

/// Collects a subscription's events until `count` of `kind` have arrived.
package func collectEvents(_ stream: AsyncStream<ClientEvent>, until count: Int, of kind: ClientEvent.Kind) async -> [ClientEvent] {
    var seen: [ClientEvent] = []
    var matched = 0
    for await event in stream {
        seen.append(event)
        if event.kind == kind { matched += 1 }
        if matched == count { break }
    }
    return seen
}
