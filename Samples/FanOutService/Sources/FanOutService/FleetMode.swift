import Curlew
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle

#if CURLEW_FLEET
    import CurlewFleet
#endif

/// `serve <port> <upstream> --fleet <postgres URL> [--soft-timeout <ms>]`: one instance of a fleet. Start it twice (two
/// ports, one database) and the instances share a second cache tier, purges and a queue limit:
///
/// - `GET /quote/{symbol}?delay=<ms>`: the upstream's quote, cached for 5 minutes in this
///   instance's memory and in PostgreSQL; a miss on every instance at once reaches the upstream
///   once (fleet-wide single-flight). The answer's `source` says where it came from (`network`,
///   `cache`…).
/// - `POST /purge/{symbol}`: removes the quote from PostgreSQL and, through `NOTIFY`, from every
///   instance's memory.
/// - `GET /partner?delay=<ms>`: one upstream call in the `partner` queue, limited to
///   ``partnerLimit`` concurrent calls across the fleet.
/// - `GET /fleet`: this instance's counters (tier hits, invalidations heard, single-flight, lease).
///
/// Compiled into the sample's own package only (`-D CURLEW_FLEET`, see Package.swift): the build
/// of this sample inside Integration/ServerNames does not link CurlewFleet and postgres-nio.
enum FleetMode {
    /// The fleet-wide limit of the `partner` queue.
    static let partnerLimit = 4

    #if CURLEW_FLEET
        static func serve(port: Int, upstream: String, databaseURL: String, softTimeout: Int?, logger: Logger) async throws {
            let settings: PostgresFleetStore.Configuration
            do {
                settings = try PostgresFleetStore.Configuration(url: databaseURL, schema: "fanout_fleet")
            } catch {
                logger.error("\(error)")
                return
            }
            let store = PostgresFleetStore(configuration: settings)
            var tiers = FleetCacheStorage.Configuration()
            // `--soft-timeout <ms>`: how long a call waits for PostgreSQL before going on without
            // it (default 5 ms; a debug build on a loaded machine needs more).
            if let milliseconds = softTimeout { tiers.softTimeout = .milliseconds(milliseconds) }
            tiers.instance = "fanout-\(port)-\(UUID().uuidString.prefix(8))"
            let storage = try FleetCacheStorage(local: MemoryCacheStorage(), store: store, configuration: tiers)
            let cache = ResponseCache(storage: storage, credentials: .anonymous)
            var leases = FleetLimiter.Configuration()
            leases.instance = tiers.instance
            let queues = QueueActor()
            let limiter = try FleetLimiter(queues: queues, store: store, limits: ["partner": partnerLimit], configuration: leases)
            let transport = TransportService(gracePeriod: .seconds(10), drainSignals: [.sigterm, .sigint])
            let client = APIClient(
                configuration: ClientConfiguration(baseURL: upstream, middleware: [cache]), transport: transport, queues: queues)

            let router = Router()
            router.get("quote/:symbol") { request, context -> SourcedQuote in
                let symbol = context.parameters.get("symbol") ?? "?"
                let delay = request.uri.queryParameters.get("delay", as: Int.self) ?? 0
                let answer = try await client.response(for: QuoteRequest(symbol: symbol, delay: delay)) { $0.cache = .maxAge(.minutes(5)) }
                return SourcedQuote(symbol: answer.value.symbol, price: answer.value.price, source: answer.source.name)
            }
            router.post("purge/:symbol") { _, context -> String in
                let symbol = context.parameters.get("symbol") ?? "?"
                // Every cached variant of the quote (any `delay`): the request part of the key.
                let removed = await cache.invalidate(.keyPrefix("GET \(upstream)/quote/\(symbol)?"))
                return "purged \(symbol): \(removed) local entries; the fleet hears it through PostgreSQL\n"
            }
            router.get("partner") { request, _ -> SourcedQuote in
                let delay = request.uri.queryParameters.get("delay", as: Int.self) ?? 0
                let quote = try await client.send(QuoteRequest(symbol: "PARTNER", delay: delay)) {
                    $0.queue = "partner"
                    $0.cache = .networkOnly
                }
                return SourcedQuote(symbol: quote.symbol, price: quote.price, source: "network")
            }
            router.get("fleet") { _, _ -> FleetCounters in
                FleetCounters(storage.statistics, limit: limiter.status(of: "partner"))
            }

            let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: logger)
            // The store first: services stop in reverse order, so the HTTP server finishes its
            // requests, the transport drains, the storage flushes its queued writes, and the store
            // stops last.
            let group = ServiceGroup(
                configuration: .init(
                    services: [.init(service: store), .init(service: storage), .init(service: limiter), .init(service: transport), .init(service: app)],
                    gracefulShutdownSignals: [.sigterm, .sigint],
                    logger: logger))
            logger.info("fleet instance", metadata: ["instance": "\(tiers.instance)", "schema": "\(settings.schema)"])
            try await group.run()
        }

        /// A quote and where this instance got it (`network`, `cache`…).
        struct SourcedQuote: ResponseCodable {
            var symbol: String
            var price: Int
            var source: String
        }

        /// What `GET /fleet` answers.
        struct FleetCounters: ResponseCodable {
            var firstTierHits: Int
            var secondTierHits: Int
            var misses: Int
            var invalidationsReceived: Int
            var singleFlightLeads: Int
            var singleFlightFollows: Int
            var singleFlightTimeouts: Int
            var failOpenReads: Int
            var partnerSlots: Int
            var partnerInstances: Int

            init(_ statistics: FleetCacheStorage.Statistics, limit: FleetLimiter.Status?) {
                firstTierHits = statistics.firstTierHits
                secondTierHits = statistics.secondTierHits
                misses = statistics.misses
                invalidationsReceived = statistics.invalidationsReceived
                singleFlightLeads = statistics.singleFlightLeads
                singleFlightFollows = statistics.singleFlightFollows
                singleFlightTimeouts = statistics.singleFlightTimeouts
                failOpenReads = statistics.failOpenReads
                partnerSlots = limit?.slots ?? 0
                partnerInstances = limit?.instances ?? 0
            }
        }
    #else
        static func serve(port: Int, upstream: String, databaseURL: String, softTimeout: Int?, logger: Logger) async throws {
            logger.error("this build has no fleet: build Samples/FanOutService's own package (scripts/fleet-two-instances.sh)")
        }
    #endif
}
