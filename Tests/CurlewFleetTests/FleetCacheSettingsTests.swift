import Curlew
@testable import CurlewFleet
import Testing

/// A tier setting the storage cannot honour is refused where it is given. Each was taken at its
/// word: a soft timeout of zero made every lookup a miss, a poll interval of zero made the waiters
/// spin, a pending-write limit of 0 dropped every write.
@Suite("Fleet cache tiers: refused settings")
struct FleetCacheSettingsTests {
    typealias Configuration = FleetCacheStorage.Configuration

    @Test func settingsThatCannotWorkAreRefusedByName() {
        let cases: [(String, (inout Configuration) -> Void)] = [
            ("softTimeout must be longer than zero, not 0.0 seconds", { $0.softTimeout = .zero }),
            ("writeTimeout must be longer than zero, not -1.0 seconds", { $0.writeTimeout = .seconds(-1) }),
            ("breakDuration must be zero or longer, not -1.0 seconds", { $0.breakDuration = .seconds(-1) }),
            ("failureThreshold must be at least 1, not 0", { $0.failureThreshold = 0 }),
            ("maximumPendingWrites must be at least 1, not 0", { $0.maximumPendingWrites = 0 }),
            ("instance must name this instance, not \" \"", { $0.instance = " " }),
            ("singleFlight.lockTimeToLive must be longer than zero, not 0.0 seconds", { $0.singleFlight?.lockTimeToLive = .zero }),
            ("singleFlight.pollInterval must be longer than zero, not 0.0 seconds", { $0.singleFlight?.pollInterval = .zero }),
            ("singleFlight.wait must be zero or longer, not -2.0 seconds", { $0.singleFlight?.wait = .seconds(-2) }),
        ]
        for (message, change) in cases {
            var configuration = Configuration()
            change(&configuration)
            let store = InMemoryFleetStore()
            let error = #expect(throws: CurlewError.self) {
                _ = try FleetCacheStorage(local: MemoryCacheStorage(), store: store, configuration: configuration)
            }
            #expect(error?.code == .invalidConnectionSettings)
            #expect(error?.stage == .configuration)
            #expect(error?.message == "FleetCacheStorage: " + message)
        }
    }

    @Test func edgeValuesThatMeanSomethingAreAccepted() throws {
        var configuration = Configuration()
        configuration.breakDuration = .zero
        configuration.singleFlight?.wait = .zero
        configuration.maximumPendingWrites = 1
        configuration.failureThreshold = 1
        let storage = try FleetCacheStorage(local: MemoryCacheStorage(), store: InMemoryFleetStore(), configuration: configuration)
        #expect(storage.configuration.maximumPendingWrites == 1)
        configuration.singleFlight = nil
        let without = try FleetCacheStorage(local: MemoryCacheStorage(), store: InMemoryFleetStore(), configuration: configuration)
        #expect(without.configuration.singleFlight == nil)
    }
}
