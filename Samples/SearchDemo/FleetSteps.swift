#if canImport(CurlewFleet)
    import Curlew
    import CurlewFleet
    import Foundation

    // The fleet tour: three "instances" of a service — each its own client and first cache tier —
    // sharing a second tier. A service uses `PostgresFleetStore` (see the "Running a fleet" article);
    // the tour uses the in-memory store, which implements the same `FleetStore` seam, so it needs no
    // database. (Left out of a build without the fleet: `CURLEW_WITHOUT_FLEET=1`, see Package.swift.)

    /// A second cache tier shared by a fleet: one instance fetches a popular key for everyone, the
    /// others are served from the shared tier, and a purge on one reaches all.
    struct FleetStep: TourStep {
        let title = "Fleet: three instances, one shared cache tier, one fetch, one purge"

        func run(with client: APIClient) async throws {
            let store = InMemoryFleetStore()
            let instances = try (1...3).map { _ in try Instance(baseURL: client.configuration.baseURL, store: store, transport: client.transport) }
            let search = SearchRequest(key: "aurora")

            // 1. Ten concurrent callers on each instance miss both tiers at once: one fetches (it
            //    holds the fleet lock on the key), the other 29 wait for its stored answer.
            let totals = try await withThrowingTaskGroup(of: Int.self) { group in
                for instance in instances {
                    for _ in 0..<10 {
                        group.addTask { try await instance.client.send(search) { $0.cache = .maxAge(.minutes(5)) }.data.total }
                    }
                }
                return try await group.reduce(into: [Int]()) { $0.append($1) }
            }
            let statistics = instances.map(\.storage.statistics)
            say("30 concurrent calls on 3 instances → \(totals.count) answers, fetched \(statistics.reduce(0) { $0 + $1.singleFlightLeads }) time(s) for the fleet")
            let waited = statistics.reduce(0) { $0 + $1.singleFlightFollows }
            let found = statistics.reduce(0) { $0 + $1.firstTierHits + $1.secondTierHits }
            say("  the others: \(waited) waited for that fetch, \(found) found its answer already stored")

            // 2. A purge on the first instance reaches the shared tier and, through the store's
            //    backplane, every instance's first tier.
            for instance in instances {
                await instance.cache.waitForPendingWrites()
                _ = await instance.storage.flush()
            }
            say("first tiers hold \(await Self.firstTierCounts(instances)) entries, the shared tier \(await store.keys.count)")
            await instances[0].cache.invalidate(.all)
            _ = await instances[0].storage.flush()
            let deadline = ContinuousClock.now + .seconds(2)
            while await Self.firstTierCounts(instances) != [0, 0, 0], ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            say("invalidate(.all) on instance 1 → first tiers \(await Self.firstTierCounts(instances)), the shared tier \(await store.keys.count)")
        }

        static func firstTierCounts(_ instances: [Instance]) async -> [Int] {
            var counts: [Int] = []
            for instance in instances { counts.append(await instance.local.count) }
            return counts
        }

        /// One instance of the service: its client over its own first tier and the shared store.
        struct Instance {
            let local = MemoryCacheStorage()
            let storage: FleetCacheStorage
            let cache: ResponseCache
            let client: APIClient

            init(baseURL: String?, store: InMemoryFleetStore, transport: any Transport) throws {
                storage = try FleetCacheStorage(local: local, store: store)
                cache = ResponseCache(storage: storage, credentials: .anonymous)
                client = APIClient(configuration: ClientConfiguration(baseURL: baseURL, middleware: [cache]), transport: transport)
            }
        }
    }
#endif
