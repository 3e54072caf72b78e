/// The clients the benchmark compares, by their command-line names.
enum ClientKind: String, CaseIterable, Sendable {
    /// Curlew's `APIClient.response(for:)` with `Response == Data`.
    case curlewData = "curlew-data"
    /// Curlew decoding the JSON body into ``SmallRecord``.
    case curlewDecoded = "curlew-decoded"
    /// Curlew (Data) with every request sent through a named ``QueueActor`` queue whose limit is
    /// the concurrency level, so it never waits but always pays acquire and release.
    case curlewQueue = "curlew-queue"
    /// Curlew (Data) with five middleware: common arguments, authorization, server clock, retry,
    /// signing.
    case curlewMiddleware = "curlew-middleware"
    /// AsyncHTTPClient 1.37.0 over HTTP/1.1, body collected into a `ByteBuffer`.
    case asyncHTTPClient = "async-http-client"
    /// FoundationNetworking's `URLSession.data(from:)`, ephemeral configuration.
    case urlSession = "urlsession"
    /// libcurl's multi interface driven directly on one thread, easy handles reused.
    case libcurl = "libcurl"

    /// The name printed in the tables.
    var displayName: String {
        switch self {
        case .curlewData: "Curlew (Data)"
        case .curlewDecoded: "Curlew (Decodable)"
        case .curlewQueue: "Curlew (queue)"
        case .curlewMiddleware: "Curlew (5 middleware)"
        case .asyncHTTPClient: "AsyncHTTPClient"
        case .urlSession: "URLSession"
        case .libcurl: "raw libcurl (multi)"
        }
    }

    /// Creates a fresh driver, so connection counting starts from zero.
    func makeDriver(options: BenchmarkOptions, concurrency: Int) throws -> any LoadDriver {
        let expected = options.expectedBytes
        switch self {
        case .curlewData:
            return TaskGroupDriver(client: CurlewDataClient(url: options.url), expectedBytes: expected)
        case .curlewDecoded:
            return TaskGroupDriver(client: CurlewDecodingClient(url: options.url), expectedBytes: expected)
        case .curlewQueue:
            return TaskGroupDriver(client: CurlewQueuedClient(url: options.url, limit: concurrency), expectedBytes: expected)
        case .curlewMiddleware:
            return TaskGroupDriver(client: CurlewMiddlewareClient(url: options.url), expectedBytes: expected)
        case .asyncHTTPClient:
            return TaskGroupDriver(client: AsyncHTTPClientClient(url: options.url), expectedBytes: expected)
        case .urlSession:
            return TaskGroupDriver(client: try URLSessionClient(url: options.url), expectedBytes: expected)
        case .libcurl:
            return try LibcurlMultiDriver(url: options.url, concurrency: concurrency, expectedBytes: expected)
        }
    }
}
