@testable import Curlew
@testable import CurlewCore
import Testing

/// Which engine carries an exchange (``EngineBalancer``) and which engines may serve a host
/// (``HostWindow``): pure values, without threads or I/O.
@Suite("Engine choice")
struct EngineBalancerTests {
    @Test func theHostHashReadsOnlyTheHostName() {
        let plain = HostWindow.hostHash("http://api.example.com/v1/users?x=1")
        #expect(HostWindow.hostHash("https://API.Example.COM:8443/other#f") == plain, "scheme, port, case and path do not matter")
        #expect(HostWindow.hostHash("http://user:pa:ss@api.example.com") == plain, "user information is not the host")
        #expect(HostWindow.hostHash("http://api.example.org/") != plain)
        #expect(HostWindow.hostHash("http://[::1]:8080/") == HostWindow.hostHash("http://[::1]/x"))
        #expect(HostWindow.hostHash("http://[::1]:8080/") != HostWindow.hostHash("http://[::2]:8080/"))
    }

    @Test func windowsWrapAroundAndCoverTheirSize() {
        let window = HostWindow(start: 3, count: 2)
        #expect((0..<4).filter { window.contains($0, engines: 4) } == [0, 3])
        #expect((0..<4).filter { HostWindow.all(4).contains($0, engines: 4) } == [0, 1, 2, 3])
        let host = HostWindow.forHost(of: "http://127.0.0.1:8080/n/1", size: 1, engines: 2)
        #expect(host.count == 1)
        #expect(host == HostWindow.forHost(of: "http://127.0.0.1:9090/", size: 1, engines: 2), "a host keeps its window")
        #expect(HostWindow.forHost(of: "http://127.0.0.1/", size: 2, engines: 2) == .all(2))
    }

    @Test func theLeastBusyEngineWinsAndTiesGoToTheFirst() {
        var balancer = EngineBalancer(engines: 3)
        let all = HostWindow.all(3)
        // Sequential exchanges from one task stay on one engine.
        for _ in 0..<5 {
            let engine = balancer.choose(current: nil, window: all)
            #expect(engine == 0)
            balancer.finished(engine)
        }
        // Concurrent ones spread evenly.
        let burst = (0..<7).map { _ in balancer.choose(current: nil, window: all) }
        #expect(burst == [0, 1, 2, 0, 1, 2, 0])
        #expect(balancer.inFlight == [3, 2, 2])
        balancer.finished(1)
        balancer.finished(1)
        #expect(balancer.choose(current: nil, window: all) == 1)
        #expect(balancer.started == [8, 3, 2])
    }

    @Test func theCallersOwnEngineWinsInsideTheHostsWindow() {
        var balancer = EngineBalancer(engines: 3)
        for _ in 0..<4 { #expect(balancer.choose(current: 2, window: .all(3)) == 2, "affinity over balance") }
        #expect(balancer.inFlight == [0, 0, 4])
        // Outside the host's window the caller's engine is not allowed.
        let window = HostWindow(start: 0, count: 2)
        #expect(balancer.choose(current: 2, window: window) == 0)
        #expect(balancer.choose(current: 2, window: window) == 1)
        // A window starting late wraps around.
        #expect(balancer.choose(current: nil, window: HostWindow(start: 2, count: 2)) == 0)
        #expect(balancer.inFlight == [2, 1, 4])
    }
}
