internal import Foundation
internal import HTTPTypes

/// The default ``Transport``: libcurl's multi interface driven by engine threads, about one per
/// core.
///
/// Use ``shared`` for the common case; create your own to choose connection limits or the
/// number of engines, or to shut it down deterministically (tests, command-line tools):
///
/// ```swift
/// let transport = CurlTransport(configuration: .init(maximumConnectionsPerHost: 8))
/// let client = APIClient(baseURL: "https://api.example.com", transport: transport)
/// // …
/// await transport.shutdown()
/// ```
///
/// Each engine is a thread with its own multi handle and connection cache. An exchange runs on
/// the engine of the task that sends it when that task prefers one of the transport's
/// executors (see ``executor``); otherwise on the engine with the fewest exchanges in flight,
/// so concurrent requests to one origin spread over every core. Connections are kept alive and
/// reused through the engine's connection cache; HTTP/2 is used over TLS when the server offers
/// it (see ``/CurlewCore/TransferOptions/HTTPVersion``).
public final class CurlTransport: Transport {
    /// The engines and their connection limits. The limits hold for the transport as a whole:
    /// they are divided among the engines (see ``engineCount``).
    public struct Configuration: Sendable, Hashable {
        /// How many idle connections the cache keeps open at least (`CURLMOPT_MAXCONNECTS`). The
        /// engine raises the limit to four per transfer in flight when that is more (libcurl's own
        /// default rule), so a burst of transfers does not close the connections it will reuse,
        /// and lowers it back after a minute without that load.
        public var maximumCachedConnections: Int
        /// Most simultaneous connections to one host, `nil` for no limit
        /// (`CURLMOPT_MAX_HOST_CONNECTIONS`). Calls beyond it wait in the transport's own queue
        /// for their origin (scheme, host and port), first in first out, and each starts the
        /// moment one of the origin's transfers ends, on the connection it gave back
        /// (``ConnectionStatistics/queuedForConnection`` counts them). The wait counts against the
        /// call's total timeout. An origin found to multiplex (HTTP/2) is not queued: its
        /// connections carry many transfers each. With several engines each engine queues its
        /// own share of the cap.
        public var maximumConnectionsPerHost: Int?
        /// Most simultaneous connections overall, `nil` for no limit (`CURLMOPT_MAX_TOTAL_CONNECTIONS`).
        public var maximumTotalConnections: Int?
        /// How many engine threads to run, `nil` for one per active processor
        /// (`ProcessInfo.activeProcessorCount`). Must be at least 1 (see
        /// ``CurlTransport/init(configuration:)`` for what a setting out of range does).
        ///
        /// Each engine has its own connections, so the limits above are divided among them:
        /// engine shares of a cap add up to exactly the cap, and the cache floor is divided
        /// rounding up. A total cap smaller than the engine count runs that many engines only;
        /// a per-host cap smaller than the engine count serves each host from that many engines
        /// (one connection each), chosen by its host name. Choose 1 to keep every connection in
        /// one cache, for example to multiplex all HTTP/2 requests to a host over one
        /// connection; with several engines each engine opens its own.
        public var engineCount: Int?
        /// How long a pooled connection may stay idle before the transport closes it. Default:
        /// 60 s. Rounded up to whole seconds, at least 1.
        ///
        /// The engines close idle connections on their own, whether or not requests keep
        /// arriving: a service that goes quiet after a burst gives its connections (and the easy
        /// handles and buffers kept for reuse) back about one idle timeout later. A connection
        /// its server closes is closed as soon as the engine notices, within about a second.
        public var idleConnectionTimeout: Duration
        /// How connection attempts that fail before anything was sent (refused, unreachable, TLS
        /// handshake reset) are retried within each call's total timeout. Default:
        /// ``/CurlewCore/ConnectRetryPolicy/standard``; ``/CurlewCore/ConnectRetryPolicy/disabled`` fails at once.
        public var connectRetry: ConnectRetryPolicy

        /// Creates a configuration.
        public init(
            maximumCachedConnections: Int = 128, maximumConnectionsPerHost: Int? = nil, maximumTotalConnections: Int? = nil,
            engineCount: Int? = nil, idleConnectionTimeout: Duration = .seconds(60), connectRetry: ConnectRetryPolicy = .standard
        ) {
            self.connectRetry = connectRetry
            self.maximumCachedConnections = maximumCachedConnections
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
            self.maximumTotalConnections = maximumTotalConnections
            self.engineCount = engineCount
            self.idleConnectionTimeout = idleConnectionTimeout
        }
    }

    /// A process-wide transport with default limits; it lives as long as the process.
    public static let shared = CurlTransport()

    /// The limits this transport was created with.
    public let configuration: Configuration
    /// The engine threads and the choice among them.
    let engines: EngineGroup
    /// Why every call fails unsent: a ``Configuration`` setting the transport cannot honour.
    private let refusal: CurlewError?

    /// Starts the engine threads with the given limits.
    ///
    /// A setting the transport cannot honour — an engine count, a connection limit or a cached
    /// connection count below 1, an idle timeout of zero or less, a ``/CurlewCore/ConnectRetryPolicy``
    /// with fewer than one attempt, a negative delay or a jitter outside 0…1 — is refused, not
    /// clamped: every call through the transport then fails unsent with
    /// ``/CurlewCore/CurlewError/Code/invalidConnectionSettings`` (stage `configuration`), its message
    /// naming the setting and its value. (libcurl would read a limit of 0 as "no limit".)
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        refusal = configuration.refusal()
        // A refused configuration still gets a working engine group (one engine, default
        // limits), so `shutdown()` and `connectionStatistics` behave; no call reaches it.
        let configuration = refusal == nil ? configuration : Configuration(engineCount: 1)
        let limits = CurlEngine.Limits(
            maximumCachedConnections: configuration.maximumCachedConnections,
            maximumConnectionsPerHost: configuration.maximumConnectionsPerHost,
            maximumTotalConnections: configuration.maximumTotalConnections,
            idleConnectionTimeout: configuration.idleConnectionTimeout, connectRetry: configuration.connectRetry)
        let layout = EngineLayout(engineCount: configuration.engineCount, limits: limits, processors: EngineLayout.defaultProcessors)
        self.engines = EngineGroup(layout: layout)
    }

    deinit {
        engines.requestShutdown()
    }

    /// How many engine threads this transport runs: ``Configuration/engineCount``, or one per
    /// active processor, and no more than ``Configuration/maximumTotalConnections`` (tests).
    var engineCount: Int { engines.engines.count }

    /// Sends the request on one of the engines (the caller's own, or the least busy; each
    /// redirect hop is placed afresh). Cancelling the calling task removes the transfer and
    /// throws `.cancelled` promptly.
    ///
    /// The body goes where ``TransportContext/responseBody`` says:
    /// - `.collect`: in memory, up to ``/CurlewCore/TransferOptions/maximumBodySize``; the call returns at
    ///   the end, with ``RawResponse/metrics``.
    /// - `.stream`: the call returns when the final head is complete (after 1xx
    ///   responses); the body arrives through a ``/CurlewCore/ResponseBodyStream`` that pauses the transfer
    ///   while the reader is behind. Errors after the head end the stream with the
    ///   ``/CurlewCore/CurlewError``; cancelling the reading task or dropping the stream cancels the
    ///   transfer. ``/CurlewCore/TransferOptions/maximumBodySize`` does not apply (use
    ///   ``/CurlewCore/ResponseBodyStream/collect(upTo:)``), and `metrics` is `nil`: they are only known at
    ///   the end.
    /// - `.file`: into a new file (mode 0600, never an existing file or a symbolic link), created
    ///   before anything is sent; `.fileNotWritable` if it cannot be. A failed transfer removes
    ///   the partial file. ``/CurlewCore/TransferOptions/maximumBodySize`` does not apply.
    ///
    /// The transport follows no redirect: a 3xx is returned like any other response, and the
    /// ``APIClient``'s redirect step follows it (``/CurlewCore/TransferOptions/redirectLimit``). When the
    /// client follows, a redirect's body is dropped unread — never decoded, never counted
    /// against ``/CurlewCore/TransferOptions/maximumBodySize``.
    ///
    /// Request bodies in a file or a stream are read while sending; a stream without a length is
    /// sent with chunked encoding over HTTP/1.1. When someone listens to
    /// ``TransportContext/events``, progress and the head are reported.
    public nonisolated(nonsending) func send(_ request: PreparedRequest, context: TransportContext) async throws -> RawResponse {
        if let refusal {
            var error = refusal
            error.request = request.summary
            throw error
        }
        // A persisted cookie jar writes what the exchange changed.
        defer { request.options.connection.cookies?.exchangeEnded() }
        let plan = TransferPlan(
            sink: context.responseBody.storage.sinkKind, observer: context.events.isActive ? context.events : nil,
            followsRedirects: context.followsRedirects)
        // The engine is chosen here rather than in an async helper: one frame fewer.
        let engine = engines.reserve(for: request)
        defer { engines.release(engine) }
        let completed = try await engines.engines[engine].execute(request, plan: plan)
        if completed.status == 407, let refusal = Self.proxyRefusal(of: request, completed) { throw refusal }
        return RawResponse(
            status: HTTPResponse.Status(code: completed.status),
            headerFields: LazyHeaderFields(block: completed.headerBlock),
            content: completed.content,
            url: completed.url,
            metrics: completed.metrics)
    }

    /// A 407 (Proxy Authentication Required) to an http URL that an HTTP proxy forwarded is the
    /// proxy's refusal, not the origin's answer: a ``/CurlewCore/CurlewError/Code/proxyFailure``,
    /// as a refused `CONNECT` tunnel is (libcurl reports those itself). The body it brought is
    /// discarded. `nil` when no HTTP proxy forwards the request (direct, SOCKS, or an https URL,
    /// whose 407 came through the tunnel from the origin).
    private static func proxyRefusal(of request: PreparedRequest, _ completed: CompletedTransfer) -> CurlewError? {
        switch request.options.connection.proxy.mode {
        case .direct: return nil
        case .server(let server) where server.kind != .http: return nil
        case .environment, .server: break
        }
        guard request.url.prefix(5).lowercased() == "http:" else { return nil }
        switch completed.content {
        case .data: break
        case .stream(let stream): stream.cancel()
        case .file(let path, _): unlink(path)
        }
        var error = CurlewError(
            code: .proxyFailure,
            message: "the proxy answered with status 407 (Proxy Authentication Required): its username or password is missing or wrong",
            request: request.summary)
        error.metrics = completed.metrics
        error.transportPhase = .receive
        return error
    }

    /// An engine thread as a task executor: tasks that prefer it run between libcurl's turns,
    /// and their requests run on that engine, so they need no thread hand-off (about one context
    /// switch per request instead of three). Keep the transport alive while such tasks run;
    /// after ``shutdown()`` their jobs run on the global concurrent executor.
    ///
    /// With several engines each read returns the next engine's executor in turn, so tasks
    /// created with one read each (as below) spread over every engine. Read it once and keep
    /// the value to place several tasks on the same engine.
    ///
    /// ```swift
    /// try await withThrowingTaskGroup(of: Void.self) { group in
    ///     for id in ids {
    ///         group.addTask(executorPreference: transport.executor) {
    ///             _ = try await client.send(GetUser(id: id))
    ///         }
    ///     }
    ///     try await group.waitForAll()
    /// }
    /// ```
    ///
    /// Decoding runs there too: move the decoding of large bodies (megabytes) to another
    /// executor, or every transfer of the engine waits for it.
    public var executor: any TaskExecutor { engines.executor }

    /// The engines' counters, summed (tests): active and paused transfers, pauses so far.
    var statistics: EngineGroupStatistics { engines.statistics }

    /// The transport's connections now, over every engine (for metrics and diagnostics).
    public var connectionStatistics: ConnectionStatistics {
        let counters = engines.statistics
        return ConnectionStatistics(
            openConnections: counters.openConnections, idleConnections: counters.idleConnections,
            connectionsOpened: counters.connectionsOpened, transfersInFlight: counters.activeTransfers,
            queuedForConnection: counters.queuedTransfers, connectRetries: counters.connectRetries)
    }

    /// Fails in-flight requests with `.shutdown`, stops every engine thread and frees every handle
    /// on them. Requests sent afterwards fail with `.shutdown`. Calling it again is a no-op.
    public func shutdown() async {
        await engines.shutdown()
    }
}
