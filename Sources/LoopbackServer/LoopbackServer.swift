import NIOCore
import NIOHTTP1
import NIOPosix

/// A small HTTP/1.1 server on the loopback interface for tests and demos.
///
/// Every request is read completely, recorded (see ``requests``) and passed to the handler; the
/// handler's ``ServerResponse`` is then written back. Connections are kept alive (HTTP/1.1
/// default), each serving its requests one after the other; many connections are served in
/// parallel. Runs on `MultiThreadedEventLoopGroup.singleton`.
///
/// Each handler runs in its own task, on threads outside Swift's cooperative pool (so a busy pool
/// never delays an answer). When its connection closes before the response is done
/// (client gone, or ``shutdown()``), that task is cancelled and ``ConnectionHandle/closed()``
/// returns; writes of a streamed body then throw.
///
/// ```swift
/// let server = try await LoopbackServer.start { request in .text("hello \(request.path)") }
/// defer { Task { await server.shutdown() } }
/// // ... point a client at server.baseURL ...
/// ```
///
/// Call ``shutdown()`` when done; the server does not stop on its own.
public final class LoopbackServer: Sendable {
    /// The listening port.
    public let port: Int
    /// The host the server listens on, as passed to ``start(host:port:handler:)``.
    public let host: String

    private let serverChannel: any Channel
    private let core: ServerCore

    private init(host: String, port: Int, serverChannel: any Channel, core: ServerCore) {
        self.host = host
        self.port = port
        self.serverChannel = serverChannel
        self.core = core
    }

    /// Starts listening on `host`:`port` (port `0` picks a free ephemeral port) and serves each
    /// request with `handler`.
    ///
    /// - Parameters:
    ///   - host: The address to listen on.
    ///   - port: The port, `0` for a free ephemeral one.
    ///   - discardingRequestBodies: Decides, from a request's method and path (percent-encoded,
    ///     without query), whether its body is only counted: its bytes are dropped as they
    ///     arrive, so a gigabyte upload costs the server no memory; the handler and ``requests``
    ///     see an empty ``ServerRequest/body`` and the count in ``ServerRequest/bodyLength``.
    ///     Default: every body is kept.
    ///   - handler: Answers each request.
    /// - Throws: the socket error if the address cannot be bound.
    public static func start(
        host: String = "127.0.0.1",
        port: Int = 0,
        discardingRequestBodies: @escaping @Sendable (_ method: String, _ path: String) -> Bool = { _, _ in false },
        handler: @escaping @Sendable (ServerRequest) async -> ServerResponse
    ) async throws -> LoopbackServer {
        let core = ServerCore(discardsBody: discardingRequestBodies, handler: handler)
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.backlog, value: 1024)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .childChannelOption(.tcpOption(.tcp_nodelay), value: 1)
            // An EOF from the client closes the connection: no half-open connections linger.
            .childChannelOption(.allowRemoteHalfClosure, value: false)
            .childChannelInitializer { channel in
                guard let connectionID = core.register(channel) else {
                    return channel.eventLoop.makeFailedFuture(LoopbackServerError.shuttingDown)
                }
                channel.closeFuture.whenComplete { _ in core.unregister(connectionID: connectionID) }
                return channel.eventLoop.makeCompletedFuture {
                    let sync = channel.pipeline.syncOperations
                    try sync.configureHTTPServerPipeline(withPipeliningAssistance: false, withErrorHandling: true)
                    try sync.addHandler(
                        HTTPConnectionHandler(core: core, connectionID: connectionID, eventLoop: channel.eventLoop)
                    )
                }
            }
        let channel = try await bootstrap.bind(host: host, port: port).get()
        guard let boundPort = channel.localAddress?.port else {
            try? await channel.close()
            throw LoopbackServerError.missingLocalAddress
        }
        return LoopbackServer(host: host, port: boundPort, serverChannel: channel, core: core)
    }

    /// Starts a server that answers with `router` (see ``start(host:port:handler:)``).
    public static func start(host: String = "127.0.0.1", port: Int = 0, router: LoopbackRouter) async throws
        -> LoopbackServer
    {
        try await start(host: host, port: port) { request in await router.handle(request) }
    }

    /// `http://<host>:<port>`, e.g. `"http://127.0.0.1:49152"` (IPv6 hosts in brackets), no trailing slash.
    public var baseURL: String {
        let needsBrackets = host.contains(":") && !host.hasPrefix("[")
        return needsBrackets ? "http://[\(host)]:\(port)" : "http://\(host):\(port)"
    }

    /// `baseURL` followed by `path` (which should start with `/`).
    public func url(_ path: String) -> String {
        baseURL + path
    }

    // MARK: Statistics

    /// TCP connections accepted so far (since start or the last ``resetStatistics()``).
    public var connectionsAccepted: Int { core.statistics.connectionsAccepted }

    /// TCP connections currently open.
    public var openConnections: Int { core.statistics.openConnections }

    /// The largest number of TCP connections seen open at the same time (since start or the
    /// last ``resetStatistics()``, which restarts it from the connections open then).
    public var peakOpenConnections: Int { core.statistics.peakOpenConnections }

    /// Every request received, in arrival order; a request is recorded once fully read, before its handler runs.
    public var requests: [ServerRequest] { core.statistics.requests }

    /// The number of requests received (the count of ``requests``).
    public var requestCount: Int { core.statistics.requestCount }

    /// The recorded requests whose ``ServerRequest/path`` equals `path` (percent-encoded, without query).
    public func requests(path: String) -> [ServerRequest] {
        core.statistics.requests(path: path)
    }

    /// Connections closed or reset by the client while a handler or its response was still in progress.
    public var disconnectsDuringResponse: Int { core.statistics.disconnectsDuringResponse }

    /// Handlers currently running for requests to `path`; a streamed response counts until its
    /// body closure returns.
    public func inFlight(path: String) -> Int {
        core.statistics.inFlight(path: path)
    }

    /// The largest number of handlers seen running at the same time for `path`.
    public func peakInFlight(path: String) -> Int {
        core.statistics.peakInFlight(path: path)
    }

    /// Zeroes the counters and forgets the recorded requests. Open connections and running
    /// handlers are not affected (peaks restart from the connections and handlers open now).
    public func resetStatistics() {
        core.statistics.reset()
    }

    // MARK: Lifecycle

    /// Closes the listener and every open connection and waits until they are closed.
    ///
    /// Handlers still running are cancelled and their ``ConnectionHandle/closed()`` returns; the
    /// method does not wait for them to return. Calling it again (or concurrently) is harmless.
    public func shutdown() async {
        let connections = core.beginShutdown()
        try? await serverChannel.close()
        try? await serverChannel.closeFuture.get()
        for connection in connections {
            connection.close(promise: nil)
        }
        for connection in connections {
            try? await connection.closeFuture.get()
        }
    }
}
