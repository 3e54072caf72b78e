public import Foundation
public import HTTPTypes
public import Logging

/// Everything an ``APIClient`` is configured with. Immutable once the client exists.
public struct ClientConfiguration: Sendable {
    /// The URL relative request paths are resolved against, e.g. `https://api.example.com/v1`.
    /// A relative path goes under the base URL's own path, with or without a leading `/`
    /// (`"items"` and `"/items"` both give `https://api.example.com/v1/items`). A query on the
    /// base URL (`https://api.example.com/v1?key=…`) is kept after the path, before the path's
    /// own query and the query items; a fragment (`#…`) fails with `.malformedURL`.
    public var baseURL: String?
    /// Headers sent with every request; a request's own header of the same name wins.
    public var headers: HTTPFields
    /// Timeouts, limits and protocol choices applied to every request (a request may adjust its
    /// copy in ``Endpoint/willSend(_:)``).
    public var transferOptions: TransferOptions
    /// Decodes JSON responses.
    public var decoder: JSONDecoder
    /// Encodes JSON bodies.
    public var encoder: JSONEncoder
    /// Query keys containing one of these lower-case fragments have their values redacted in
    /// errors and logs.
    public var secretQueryKeyFragments: Set<String>
    /// HUD-style callbacks for every request, batch and chain (see ``Accessory``).
    public var accessories: [any Accessory]
    /// The middleware chain, outermost first: the first sees the request first and the response
    /// last (see ``APIMiddleware``).
    public var middleware: [any APIMiddleware]
    /// Origins besides the base URL and the ``FailoverMiddleware`` mirrors that receive the
    /// client's credentials, signatures and common arguments (`scheme://host[:port]`). Requests
    /// to any other origin — a CDN image, a partner API given as an absolute URL — get none of
    /// them unless the call lists the origin in ``RequestOptions/trustedOrigins``.
    public var trustedOrigins: Set<String>
    /// The named queue (``RequestOptions/queue``) of every call that names none: with a limit on
    /// it in the client's ``QueueActor``, each such call waits for one of its slots, higher
    /// ``RequestOptions/priority`` first, FIFO within a priority — so priority matters outside
    /// your own queues too. Clients sharing a `QueueActor` and
    /// this name share the slots. Default: `nil`, calls without a queue are not limited. An empty
    /// name fails each call with ``/CurlewCore/CurlewError/Code/invalidQueueName``.
    ///
    /// ```swift
    /// let queues = QueueActor(limits: ["all": 4])
    /// let client = APIClient(configuration: ClientConfiguration(baseURL: url, defaultQueue: "all"), queues: queues)
    /// let urgent = try await client.send(Search(key: "fog")) { $0.priority = .high }
    /// ```
    public var defaultQueue: String?
    /// Where the client logs: one line per request at `debug` (method, redacted URL, status or
    /// error code, duration). Header values and secret query values never appear.
    public var logger: Logger
    /// A header that tells the server how long the client waits for each attempt under the call's
    /// deadline (``withDeadline(in:isolation:operation:)``): the time left when the attempt
    /// starts, or the attempt's own total timeout when that is shorter. In gRPC's timeout
    /// encoding (`287m`: whole milliseconds, unit `m`) — `grpc-timeout` or a name of your own.
    /// `nil` (the default) sends nothing. Calls without a deadline never carry it. It is set
    /// below every middleware, so a signature does not cover it.
    public var deadlineHeader: HTTPField.Name?

    /// Creates a configuration.
    /// - Parameters:
    ///   - baseURL: The base URL for relative paths; `nil` when every request uses absolute URLs.
    ///   - headers: Default headers. Default: `User-Agent: Curlew`.
    ///   - transferOptions: Default transfer options.
    ///   - decoder: The JSON decoder for responses.
    ///   - encoder: The JSON encoder for bodies.
    ///   - secretQueryKeyFragments: Which query keys to redact in descriptions.
    ///   - accessories: Callbacks around every request, batch and chain.
    ///   - middleware: The middleware chain, outermost first (built-ins are placed by phase).
    ///   - trustedOrigins: More origins that receive credentials, signatures, common arguments.
    ///   - logger: The logger; default label `curlew`.
    ///   - defaultQueue: The named queue of calls that name none (see ``defaultQueue``).
    public init(
        baseURL: String? = nil,
        headers: HTTPFields = [.userAgent: "Curlew"],
        transferOptions: TransferOptions = TransferOptions(),
        decoder: JSONDecoder = JSONDecoder(),
        encoder: JSONEncoder = JSONEncoder(),
        secretQueryKeyFragments: Set<String> = RequestSummary.defaultSecretKeyFragments,
        accessories: [any Accessory] = [],
        middleware: [any APIMiddleware] = [],
        trustedOrigins: Set<String> = [],
        logger: Logger = Logger(label: "curlew"),
        defaultQueue: String? = nil
    ) {
        self.baseURL = baseURL
        self.headers = headers
        self.transferOptions = transferOptions
        self.decoder = decoder
        self.encoder = encoder
        self.secretQueryKeyFragments = secretQueryKeyFragments
        self.accessories = accessories
        self.middleware = middleware
        self.trustedOrigins = trustedOrigins
        self.logger = logger
        self.defaultQueue = defaultQueue
    }
}
