internal import HTTPTypes

/// The default ``Transport``: libcurl's multi interface driven by one engine thread.
///
/// Use ``shared`` for the common case; create your own to choose connection limits or to shut it
/// down deterministically (tests, command-line tools):
///
/// ```swift
/// let transport = CurlTransport(configuration: .init(maximumConnectionsPerHost: 8))
/// let client = APIClient(baseURL: "https://api.example.com", transport: transport)
/// // …
/// await transport.shutdown()
/// ```
///
/// Connections are kept alive and reused through the multi handle's connection cache; HTTP/2 is
/// used over TLS when the server offers it (see ``TransferOptions/HTTPVersion``).
public final class CurlTransport: Transport {
    /// Connection limits of one engine.
    public struct Configuration: Sendable, Hashable {
        /// How many idle connections the cache keeps open at least (`CURLMOPT_MAXCONNECTS`). The
        /// engine raises the limit to four per transfer in flight when that is more (libcurl's own
        /// default rule), so a burst of transfers does not close the connections it will reuse,
        /// and lowers it back after a minute without that load.
        public var maximumCachedConnections: Int
        /// Most simultaneous connections to one host, `nil` for no limit
        /// (`CURLMOPT_MAX_HOST_CONNECTIONS`). Transfers beyond it wait for a free connection.
        public var maximumConnectionsPerHost: Int?
        /// Most simultaneous connections overall, `nil` for no limit (`CURLMOPT_MAX_TOTAL_CONNECTIONS`).
        public var maximumTotalConnections: Int?

        /// Creates a configuration.
        public init(maximumCachedConnections: Int = 128, maximumConnectionsPerHost: Int? = nil, maximumTotalConnections: Int? = nil) {
            self.maximumCachedConnections = maximumCachedConnections
            self.maximumConnectionsPerHost = maximumConnectionsPerHost
            self.maximumTotalConnections = maximumTotalConnections
        }
    }

    /// A process-wide transport with default limits; it lives as long as the process.
    public static let shared = CurlTransport()

    /// The limits this transport was created with.
    public let configuration: Configuration
    private let engine: CurlEngine

    /// Starts an engine thread with the given limits.
    public init(configuration: Configuration = Configuration()) {
        self.configuration = configuration
        self.engine = CurlEngine(limits: .init(
            maximumCachedConnections: configuration.maximumCachedConnections,
            maximumConnectionsPerHost: configuration.maximumConnectionsPerHost,
            maximumTotalConnections: configuration.maximumTotalConnections
        ))
    }

    deinit {
        engine.requestShutdown()
    }

    /// Sends the request on the engine thread. Cancelling the calling task removes the transfer
    /// and throws `.cancelled` promptly.
    ///
    /// The body goes where ``TransportContext/responseBody`` says:
    /// - `.collect`: in memory, up to ``TransferOptions/maximumBodySize``; the call returns at
    ///   the end, with ``RawResponse/metrics``.
    /// - `.stream`: the call returns when the final head is complete (after 1xx
    ///   responses); the body arrives through a ``ResponseBodyStream`` that pauses the transfer
    ///   while the reader is behind. Errors after the head end the stream with the
    ///   ``CurlewError``; cancelling the reading task or dropping the stream cancels the
    ///   transfer. ``TransferOptions/maximumBodySize`` does not apply (use
    ///   ``ResponseBodyStream/collect(upTo:)``), and `metrics` is `nil`: they are only known at
    ///   the end.
    /// - `.file`: into a new file (mode 0600, never an existing file or a symbolic link), created
    ///   before anything is sent; `.fileNotWritable` if it cannot be. A failed transfer removes
    ///   the partial file. ``TransferOptions/maximumBodySize`` does not apply.
    ///
    /// The transport follows no redirect: a 3xx is returned like any other response, and the
    /// ``APIClient``'s redirect step follows it (``TransferOptions/redirectLimit``). When the
    /// client follows, a redirect's body is dropped unread — never decoded, never counted
    /// against ``TransferOptions/maximumBodySize``.
    ///
    /// Request bodies in a file or a stream are read while sending; a stream without a length is
    /// sent with chunked encoding over HTTP/1.1. When someone listens to
    /// ``TransportContext/events``, progress and the head are reported.
    public nonisolated(nonsending) func send(_ request: PreparedRequest, context: TransportContext) async throws -> RawResponse {
        // A persisted cookie jar writes what the exchange changed.
        defer { request.options.connection.cookies?.exchangeEnded() }
        let plan = TransferPlan(
            sink: context.responseBody.storage.sinkKind, observer: context.events.isActive ? context.events : nil,
            followsRedirects: context.followsRedirects)
        let completed = try await engine.execute(request, plan: plan)
        return RawResponse(
            status: HTTPResponse.Status(code: completed.status),
            headerFields: LazyHeaderFields(block: completed.headerBlock),
            content: completed.content,
            url: completed.url,
            metrics: completed.metrics)
    }

    /// The engine thread as a task executor: tasks that prefer it run between libcurl's turns,
    /// so their requests need no thread hand-off (about one context switch per request instead
    /// of three). Keep the transport alive while such tasks run; after ``shutdown()`` their jobs
    /// run on the global concurrent executor.
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
    public var executor: any TaskExecutor { engine }

    /// The engine's counters (tests): active and paused transfers, pauses so far.
    var statistics: EngineStatistics { engine.statistics }

    /// Fails in-flight requests with `.shutdown`, stops the engine thread and frees every handle on
    /// it. Requests sent afterwards fail with `.shutdown`. Calling it again is a no-op.
    public func shutdown() async {
        await engine.shutdown()
    }
}
