@testable import Curlew
@testable import CurlewCore
import Testing

/// How a configuration becomes engines and their connection limits: a pure value, without
/// threads or I/O.
@Suite("Engine layout")
struct EngineLayoutTests {
    private func layout(engines: Int? = nil, processors: Int = 2, cached: Int = 128, perHost: Int? = nil, total: Int? = nil) -> EngineLayout {
        EngineLayout(
            engineCount: engines,
            limits: .init(maximumCachedConnections: cached, maximumConnectionsPerHost: perHost, maximumTotalConnections: total),
            processors: processors)
    }

    @Test func oneEnginePerProcessorUnlessConfigured() {
        #expect(layout(processors: 2).engineCount == 2)
        #expect(layout(processors: 16).engineCount == 16)
        #expect(layout(processors: 0).engineCount == 1, "at least one engine")
        #expect(layout(engines: 3, processors: 16).engineCount == 3)
        #expect(layout(engines: 1, processors: 16).engineCount == 1)
    }

    @Test func capsAreDividedSoTheSharesAddUpToTheCap() {
        let perHost = layout(engines: 4, perHost: 10, total: 30)
        #expect(perHost.limits.map(\.maximumConnectionsPerHost) == [3, 3, 2, 2])
        #expect(perHost.limits.map(\.maximumTotalConnections) == [8, 8, 7, 7])
        #expect(perHost.hostWindowSize == 4)
        let even = layout(engines: 2, perHost: 2)
        #expect(even.limits.map(\.maximumConnectionsPerHost) == [1, 1])
        #expect(even.limits.map(\.maximumTotalConnections) == [nil, nil])
    }

    @Test func aPerHostCapBelowTheEngineCountNarrowsEachHostsWindow() {
        let narrow = layout(engines: 4, perHost: 3)
        #expect(narrow.engineCount == 4, "other hosts still use every engine")
        #expect(narrow.limits.map(\.maximumConnectionsPerHost) == [1, 1, 1, 1])
        #expect(narrow.hostWindowSize == 3)
    }

    @Test func aTotalCapBelowTheEngineCountRunsFewerEngines() {
        let capped = layout(engines: 4, perHost: 8, total: 3)
        #expect(capped.engineCount == 3)
        #expect(capped.limits.map(\.maximumTotalConnections) == [1, 1, 1])
        #expect(capped.limits.map(\.maximumConnectionsPerHost) == [3, 3, 2])
        #expect(layout(engines: 4, total: 1).engineCount == 1)
    }

    @Test func capsOfZeroOrLessMeanNoLimitAsInLibcurl() {
        let unlimited = layout(engines: 2, perHost: 0, total: -1)
        #expect(unlimited.engineCount == 2)
        #expect(unlimited.limits.map(\.maximumConnectionsPerHost) == [nil, nil])
        #expect(unlimited.limits.map(\.maximumTotalConnections) == [nil, nil])
        #expect(unlimited.hostWindowSize == 2)
    }

    @Test func theCacheFloorIsDividedRoundingUp() {
        #expect(layout(engines: 3, cached: 128).limits.map(\.maximumCachedConnections) == [43, 43, 43])
        #expect(layout(engines: 4, cached: 1).limits.map(\.maximumCachedConnections) == [1, 1, 1, 1])
    }
}
