import Curlew
import Foundation
import Synchronization

// The cache tour: one disk cache, a clock the tour can move forward, three seeds' habits.

/// HAccess's 8-hour rule, HttpManager's cached page then redraw, and its offline fallback.
struct CacheStep: TourStep {
    let title = "Cache: the 8-hour rule, cache then network, offline fallback"

    func run(with client: APIClient) async throws {
        let directory = NSTemporaryDirectory() + "curlew-tour-cache-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let clock = TourClock()
        let cache = ResponseCache(
            configuration: .init(
                storage: DiskCacheStorage(directory: directory), credentials: .anonymous, now: { clock.now }))
        let cached = APIClient(
            configuration: ClientConfiguration(baseURL: client.configuration.baseURL, middleware: [cache]),
            transport: client.transport)
        let search = SearchRequest(key: "sunset")

        // 1. The 8-hour rule: no request while the stored answer is younger than 8 hours.
        for label in ["first call", "an hour later", "8 hours and a minute later"] {
            if label == "an hour later" { clock.advance(hours: 1) }
            if label.hasPrefix("8 hours") { clock.advance(hours: 7.02) }
            let response = try await cached.response(for: search) { $0.cache = .maxAge(.hours(8)) }
            say("\(label): .maxAge(.hours(8)) → \(Self.describe(response.source, clock))")
        }

        // 2. Cache then network: the stored page at once, then the fresh one.
        say("for try await page in client.cacheThenNetwork(SearchRequest(key: \"sunset\"))")
        for try await page in cached.cacheThenNetwork(search) {
            say("  \(Self.describe(page.source, clock)): \(page.value.data.total) pictures")
        }

        // 3. Offline: the same key from a base URL where nothing listens.
        _ = try await cached.send(search) {
            $0.cache = .writeOnly; $0.cacheKey = "search/sunset"
        }
        let offline = APIClient(
            configuration: ClientConfiguration(baseURL: "http://127.0.0.1:9/api", middleware: [cache]), transport: client.transport)
        let fallback = try await offline.response(for: search) {
            $0.cache = .networkFirst(staleFor: .hours(24))
            $0.cacheKey = "search/sunset"
        }
        say("server unreachable, .networkFirst(staleFor: .hours(24)) → \(Self.describe(fallback.source, clock))")
        do {
            _ = try await offline.send(search) {
                $0.cache = .cacheOnly(); $0.cacheKey = "search/nothing"
            }
        } catch let error as CurlewError where error.code == .cacheMiss {
            say(".cacheOnly() with nothing stored → .\(error.code), nothing sent")
        }
        await cache.waitForPendingWrites()  // stores land after the calls; wait before the directory goes
    }

    /// Where an answer came from and, for a stored one, its age on the tour's clock.
    static func describe(_ source: ResponseSource, _ clock: TourClock) -> String {
        guard let storedAt = source.storedAt, source == .cache else { return "from the \(source.name)" }
        return "from the cache, \(Int(clock.now.timeIntervalSince(storedAt) / 60)) min old"
    }
}

/// A clock the tour moves forward instead of waiting hours.
final class TourClock: Sendable {
    /// Hours added to the real time, guarded by the mutex.
    private let offset = Mutex(0.0)

    var now: Date { Date().addingTimeInterval(offset.withLock { $0 }) }

    func advance(hours: Double) { offset.withLock { $0 += hours * 3_600 } }
}
