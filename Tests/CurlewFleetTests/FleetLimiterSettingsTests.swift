import Curlew
@testable import CurlewFleet
import Testing

/// A limit or setting the limiter cannot honour is refused where it is given. A limit of 0 used to
/// become 1 in silence, a limit on the queue "" was accepted though no call can name it, and a
/// check interval of zero made the limiter spin.
@Suite("Fleet-wide queue limits: refused settings")
struct FleetLimiterSettingsTests {
    typealias Configuration = FleetLimiter.Configuration

    static func refusal(limits: [String: Int], _ change: (inout Configuration) -> Void = { _ in }) async -> CurlewError? {
        var configuration = Configuration()
        change(&configuration)
        let store = InMemoryFleetStore()
        let error = #expect(throws: CurlewError.self) {
            _ = try FleetLimiter(queues: QueueActor(), store: store, limits: limits, configuration: configuration)
        }
        #expect(error?.code == .invalidConnectionSettings)
        #expect(error?.stage == .configuration)
        for name in limits.keys { #expect(await store.leased(name) == 0) }
        return error
    }

    @Test(arguments: [0, -3])
    func aLimitBelowOneIsRefused(_ limit: Int) async {
        let error = await Self.refusal(limits: ["partner": limit])
        #expect(error?.message == "FleetLimiter: the limit of the queue \"partner\" must be at least 1, not \(limit)")
    }

    @Test(arguments: ["", "  "])
    func aLimitOnABlankQueueNameIsRefused(_ name: String) async {
        let error = await Self.refusal(limits: ["partner": 8, name: 4])
        #expect(error?.message == "FleetLimiter: the limit 4 names the queue \"\(name)\", which is empty: no call can use it")
    }

    @Test func timingsThatCannotWorkAreRefusedByName() async {
        let cases: [(String, (inout Configuration) -> Void)] = [
            ("leaseTimeToLive must be longer than zero, not 0.0 seconds", { $0.leaseTimeToLive = .zero }),
            ("checkInterval must be longer than zero, not -0.005 seconds", { $0.checkInterval = .milliseconds(-5) }),
            ("leaseTimeout must be longer than zero, not 0.0 seconds", { $0.leaseTimeout = .zero }),
            ("retryInterval must be zero or longer, not -1.0 seconds", { $0.retryInterval = .seconds(-1) }),
            ("idleRelease must be zero or longer, not -1.0 seconds", { $0.idleRelease = .seconds(-1) }),
            ("assumedInstances must be at least 1, not 0", { $0.assumedInstances = 0 }),
            ("instance must name this instance, not \"\"", { $0.instance = "" }),
        ]
        for (message, change) in cases {
            let error = await Self.refusal(limits: ["partner": 8], change)
            #expect(error?.message == "FleetLimiter: " + message)
        }
    }

    @Test func zeroRetryIntervalAndIdleReleaseAreAccepted() throws {
        var configuration = Configuration()
        configuration.retryInterval = .zero
        configuration.idleRelease = .zero
        let limiter = try FleetLimiter(queues: QueueActor(), store: InMemoryFleetStore(), limits: ["partner": 1], configuration: configuration)
        #expect(limiter.limits == ["partner": 1])
        #expect(limiter.status(of: "partner")?.capacity == 1)
    }
}
