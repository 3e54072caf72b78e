import Curlew
import CurlewFleet
import Foundation
import LoopbackServer
import Synchronization
import Testing

/// A GET returning its body as text, with a cache policy and optional headers and queue.
struct FleetText: Endpoint {
    typealias Response = String
    var path: String
    var headers: [String: String] = [:]
    var policy: CachePolicy = .maxAge(.minutes(5))
    var queue: String? = nil

    var options: RequestOptions {
        var options = RequestOptions()
        options.cache = policy
        options.queue = queue
        return options
    }
}

/// Holds responses until the test opens it.
final class Gate: Sendable {
    /// Whether it is open, guarded by the mutex.
    private let open = Mutex(false)
    func release() { open.withLock { $0 = true } }
    var isOpen: Bool { open.withLock { $0 } }
}

/// One "instance" of a service: its own first tier and client over a shared store.
struct FleetInstance {
    let storage: FleetCacheStorage
    let cache: ResponseCache
    let client: APIClient
    let local: MemoryCacheStorage

    init(baseURL: String, store: any FleetStore, configuration: FleetCacheStorage.Configuration = .generousForTests, queues: QueueActor = QueueActor()) throws {
        local = MemoryCacheStorage()
        storage = try FleetCacheStorage(local: local, store: store, configuration: configuration)
        cache = ResponseCache(storage: storage, credentials: .anonymous)
        client = APIClient(configuration: ClientConfiguration(baseURL: baseURL, middleware: [cache]), queues: queues)
    }
}

extension FleetCacheStorage.Configuration {
    /// Timeouts long enough that a loaded two-core machine never turns a slow answer into a
    /// fail-open decision in tests that count exact requests. The in-memory store answers at
    /// once; what can take seconds is a turn on the cooperative pool while other tests burn CPU
    /// (a landing run failed open on a 5 s soft timeout while 300 callers and a gibibyte writer
    /// shared two threads). Tests of the timeouts themselves set their own.
    static var generousForTests: Self {
        var configuration = Self()
        configuration.softTimeout = .seconds(60)
        configuration.writeTimeout = .seconds(60)
        var flight = FleetCacheStorage.SingleFlight()
        flight.wait = .seconds(60)
        flight.lockTimeToLive = .seconds(60)
        configuration.singleFlight = flight
        return configuration
    }
}

/// A server whose `/item/{n}` answers `item n` with `Cache-Control: max-age=300`, optionally
/// held behind a gate, and `/slow` that takes `delay` (for concurrency peaks).
func startOrigin(gate: Gate? = nil, delay: Duration = .milliseconds(20)) async throws -> LoopbackServer {
    var router = LoopbackRouter()
    router.on("GET", "/item/{n}") { request, parameters in
        while let gate, !gate.isOpen, !request.connection.isClosed { try? await Task.sleep(for: .milliseconds(5)) }
        return ServerResponse(headers: [("Content-Type", "text/plain"), ("Cache-Control", "max-age=300")], body: Array("item \(parameters["n"] ?? "")".utf8))
    }
    router.on("GET", "/slow/{n}") { _, parameters in
        try? await Task.sleep(for: delay)
        return .text("slow \(parameters["n"] ?? "")")
    }
    return try await LoopbackServer.start(router: router)
}
