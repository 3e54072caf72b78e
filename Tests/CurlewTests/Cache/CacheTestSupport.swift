@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// A clock the cache reads; tests move it instead of sleeping.
final class CacheTestClock: Sendable {
    /// The current date, guarded by the mutex.
    private let date: Mutex<Date>

    init(_ start: Date = Date()) { date = Mutex(start) }

    var now: Date { date.withLock { $0 } }

    func advance(_ seconds: Double) { date.withLock { $0 = $0.addingTimeInterval(seconds) } }

    var function: @Sendable () -> Date { { self.now } }
}

/// A counter shared by a loopback handler and the test.
final class HitCounter: Sendable {
    /// The count, guarded by the mutex.
    private let value = Mutex(0)

    func next() -> Int {
        value.withLock {
            $0 += 1; return $0
        }
    }
    var count: Int { value.withLock { $0 } }
}

/// A GET whose body is returned as text; path, query, headers and policy set by the test.
struct CachedText: Endpoint {
    typealias Response = String
    var path: String
    var query: [URLQueryItem] = []
    var headers: [String: String] = [:]
    var policy: CachePolicy = .networkOnly
    var requiresLogin = false
    var volatile: Set<String> = []
    /// A custom cache key, so one entry can be read through a client at another address.
    var key: String? = nil

    var options: RequestOptions {
        var options = RequestOptions(requiresAuthentication: requiresLogin, volatileParameters: volatile)
        options.cache = policy
        options.cacheKey = key
        return options
    }
}

/// An endpoint type whose own options say "the 8-hour rule" (HAccess `HNCacheTypeAlternative`).
struct EightHourFeed: Endpoint {
    typealias Response = String
    var path: String { "feed" }
    var options: RequestOptions {
        var options = RequestOptions()
        options.cache = .maxAge(.hours(8))
        return options
    }
}

/// A fresh, empty directory under the temporary directory.
func makeCacheDirectory(_ label: String = "cache") -> String {
    let path = NSTemporaryDirectory() + "curlew-\(label)-\(UUID().uuidString)"
    return path
}

/// Starts a loopback server, a transport and a client whose middleware include `cache`.
func withCachedLoopback(
    cache: ResponseCache, middleware: [any APIMiddleware] = [], trustedOrigins: Set<String> = [],
    handler: @escaping @Sendable (ServerRequest) async -> ServerResponse,
    _ body: (LoopbackServer, APIClient) async throws -> Void
) async throws {
    try await withLoopback(handler: handler) { server, _, transport in
        let client = APIClient(
            configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [cache] + middleware, trustedOrigins: trustedOrigins),
            transport: transport)
        try await body(server, client)
    }
}

/// Collects the events of a client from the moment it is created.
final class EventLog: Sendable {
    /// The events received so far, guarded by the mutex.
    private final class Store: Sendable {
        let events = Mutex<[ClientEvent]>([])
    }

    private let store = Store()
    /// The subscription; cancelled by ``stop()``.
    private let task: Task<Void, Never>

    init(_ client: APIClient) {
        let stream = client.events
        let store = store
        task = Task {
            for await event in stream { store.events.withLock { $0.append(event) } }
        }
    }

    func kinds(_ wanted: Set<ClientEvent.Kind>) -> [ClientEvent.Kind] {
        store.events.withLock { $0.map(\.kind).filter { wanted.contains($0) } }
    }

    func stop() { task.cancel() }
}

/// The cache event kinds.
let cacheEventKinds: Set<ClientEvent.Kind> = [.cacheHit, .cacheMiss, .cacheRevalidated, .cacheStored]

/// The value of a header the server received, by case-insensitive name.
func received(_ request: ServerRequest, _ name: String) -> String? {
    request.headers.first { $0.name.lowercased() == name.lowercased() }?.value
}

/// An RFC 9110 date.
func httpDate(_ date: Date) -> String {
    let formatter = DateFormatter()
    formatter.locale = Locale(identifier: "en_US_POSIX")
    formatter.timeZone = TimeZone(identifier: "GMT")
    formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
    return formatter.string(from: date)
}
