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
    /// AsyncHTTPClient 1.37.0 over HTTP/1.1 (HTTP/2 with `--http-version 2`), body collected into a
    /// `ByteBuffer`.
    case asyncHTTPClient = "async-http-client"
    /// FoundationNetworking's `URLSession.data(from:)`, ephemeral configuration.
    case urlSession = "urlsession"
    /// libcurl's multi interface driven directly on one thread, easy handles reused.
    case libcurl = "libcurl"
    /// The same, sending what Curlew sends (`User-Agent` and `Accept-Encoding` lines), taking the
    /// head through a header callback, with Curlew's default timeouts and body limit: the libcurl
    /// part of a Curlew request, with no Swift. Opt-in (not in ``defaultClients``).
    case libcurlCurlewWire = "libcurl-curlew-wire"
    /// Curlew (Data) answered from a `ResponseCache` on `MemoryCacheStorage` (`.maxAge`): after
    /// the first request, every request is a memory hit. Opt-in (not in ``defaultClients``).
    case curlewCacheMemory = "curlew-cache-memory"
    /// The same on `DiskCacheStorage` in a temporary directory: disk hits. Opt-in.
    case curlewCacheDisk = "curlew-cache-disk"
    /// Curlew (Data) with `.alwaysRevalidate` against nginx's static copy of the document: every
    /// request is revalidated with a `304`. Opt-in.
    case curlewRevalidate = "curlew-revalidate"

    /// The clients run when `--clients` is not given: the rows of the main table. The cache rows
    /// are named explicitly, so adding them did not change the default run.
    static let defaultClients: [ClientKind] = [
        .curlewData, .curlewDecoded, .curlewQueue, .curlewMiddleware, .asyncHTTPClient, .urlSession, .libcurl,
    ]

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
        case .libcurlCurlewWire: "raw libcurl, Curlew's wire"
        case .curlewCacheMemory: "Curlew (memory cache hit)"
        case .curlewCacheDisk: "Curlew (disk cache hit)"
        case .curlewRevalidate: "Curlew (304 revalidation)"
        }
    }

    /// Creates a fresh driver, so connection counting starts from zero.
    func makeDriver(options: BenchmarkOptions, concurrency: Int) throws -> any LoadDriver {
        let expected = options.expectedBytes
        switch self {
        case .curlewData:
            return TaskGroupDriver(client: CurlewDataClient(url: options.url, caFile: options.caFile, http2: options.http2, engines: options.engines), expectedBytes: expected)
        case .curlewDecoded:
            return TaskGroupDriver(client: CurlewDecodingClient(url: options.url, engines: options.engines), expectedBytes: expected)
        case .curlewQueue:
            return TaskGroupDriver(client: CurlewQueuedClient(url: options.url, limit: concurrency, engines: options.engines), expectedBytes: expected)
        case .curlewMiddleware:
            return TaskGroupDriver(client: CurlewMiddlewareClient(url: options.url, engines: options.engines), expectedBytes: expected)
        case .asyncHTTPClient:
            return TaskGroupDriver(client: try AsyncHTTPClientClient(url: options.url, caFile: options.caFile, http2: options.http2), expectedBytes: expected)
        case .urlSession:
            return TaskGroupDriver(client: try URLSessionClient(url: options.url), expectedBytes: expected)
        case .libcurl:
            return try LibcurlMultiDriver(url: options.url, concurrency: concurrency, expectedBytes: expected, caFile: options.caFile, http2: options.http2)
        case .libcurlCurlewWire:
            return try LibcurlMultiDriver(
                url: options.url, concurrency: concurrency, expectedBytes: expected, caFile: options.caFile, http2: options.http2, likeCurlew: true)
        case .curlewCacheMemory:
            return TaskGroupDriver(
                client: try CurlewCacheClient(url: options.url, store: .memory, concurrency: concurrency, label: rawValue, engines: options.engines), expectedBytes: expected)
        case .curlewCacheDisk:
            return TaskGroupDriver(
                client: try CurlewCacheClient(url: options.url, store: .disk, concurrency: concurrency, label: rawValue, engines: options.engines), expectedBytes: expected)
        case .curlewRevalidate:
            return TaskGroupDriver(
                client: try CurlewCacheClient(url: options.staticURL, store: .revalidate, concurrency: concurrency, label: rawValue, engines: options.engines),
                expectedBytes: expected)
        }
    }
}
