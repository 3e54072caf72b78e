import Curlew
import Foundation
import Synchronization

/// `GET <url>` returning the body bytes, with a fixed cache policy in its options.
struct CachedDataRequest: Endpoint {
    typealias Response = Data
    let path: String
    let options: RequestOptions

    init(path: String, policy: CachePolicy) {
        self.path = path
        var options = RequestOptions()
        options.cache = policy
        self.options = options
    }
}

/// Curlew (Data) through a ``ResponseCache`` (anonymous credentials) on its own `CurlTransport`.
///
/// - ``Store/memory``: `MemoryCacheStorage`, policy `.maxAge(.hours(1))` — the first request of
///   the warm-up is a miss that stores the 225 bytes (nginx's `return 200` sends no
///   `Cache-Control`, so the app lifetime decides); every later one is a memory hit.
/// - ``Store/disk``: the same with `DiskCacheStorage` in a fresh temporary directory (removed
///   at shutdown): every later request reads, checks and decodes the entry file.
/// - ``Store/revalidate``: `MemoryCacheStorage`, policy `.alwaysRevalidate`, against nginx's
///   static copy of the document (which has an `ETag` and `Last-Modified`): every later request
///   is sent with `If-None-Match`/`If-Modified-Since`, nginx answers `304`, and the stored bytes
///   are served (and the refreshed entry written back).
///
/// The response's ``ResponseSource`` is checked: a measured request must come from the cache
/// (or be revalidated). Responses from the network are allowed only until the first entry is
/// stored — one per concurrent task at most — and are counted; their count is printed to the
/// error stream at shutdown.
struct CurlewCacheClient: BenchmarkClient {
    enum Store: Sendable {
        case memory, disk, revalidate
    }

    private let transport: CurlTransport
    private let client: APIClient
    private let cache: ResponseCache
    private let request: CachedDataRequest
    private let expected: ResponseSource
    private let directory: String?
    private let label: String
    /// Network answers seen; at most `allowedMisses` are accepted.
    private let networkAnswers = SharedCounter()
    private let allowedMisses: Int

    init(url: String, store: Store, concurrency: Int, label: String, engines: Int? = nil) throws {
        transport = CurlTransport(configuration: .init(engineCount: engines))
        let storage: any CacheStorage
        switch store {
        case .memory, .revalidate:
            storage = MemoryCacheStorage()
            directory = nil
        case .disk:
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-bench-cache-\(UUID().uuidString)").path
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
            storage = DiskCacheStorage(directory: path)
            directory = path
        }
        cache = ResponseCache(storage: storage, credentials: .anonymous)
        client = APIClient(configuration: ClientConfiguration(middleware: [cache]), transport: transport)
        let policy: CachePolicy = store == .revalidate ? .alwaysRevalidate : .maxAge(.hours(1))
        request = CachedDataRequest(path: url, policy: policy)
        expected = store == .revalidate ? .revalidated : .cache
        allowedMisses = concurrency
        self.label = label
    }

    func fetch() async throws -> (status: Int, bodyBytes: Int) {
        let response = try await client.response(for: request)
        if response.source != expected {
            let seen = networkAnswers.value.wrappingAdd(1, ordering: .relaxed).newValue
            guard seen <= allowedMisses else { throw UnexpectedSource(source: response.source.description) }
        }
        return (response.status.code, response.value.count)
    }

    func shutdown() async {
        await cache.waitForPendingWrites()  // stores land after the calls
        Console.error("  \(label) cache: \(networkAnswers.value.load(ordering: .relaxed)) answers from the network before the entry was stored")
        await transport.shutdown()
        if let directory { try? FileManager.default.removeItem(atPath: directory) }
    }

    /// A measured request was answered from somewhere else than the row measures.
    struct UnexpectedSource: Error {
        let source: String
    }
}

/// An atomic counter shared by the copies of a client.
final class SharedCounter: Sendable {
    let value = Atomic<Int>(0)
}
