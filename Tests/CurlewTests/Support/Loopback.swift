import Curlew
import Foundation
import LoopbackServer
import Testing

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

/// Polls `condition` every 10 ms for up to `seconds`; returns whether it became true.
/// For waiting on server-side effects (a disconnect noticed), never for timing assertions: the
/// bound is generous because a loaded machine can take seconds, and a condition that holds
/// returns at once.
func eventually(within seconds: Double = 30, _ condition: () async -> Bool) async -> Bool {
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

/// An address where every connection attempt is refused: port 1 is privileged and no test binds
/// it. A loopback server's port after `shutdown()` is not one — parallel tests can be given the
/// same port a moment later, and then a connect is accepted or reset instead of refused.
let refusingBaseURL = "http://127.0.0.1:1"
