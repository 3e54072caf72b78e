import Synchronization

/// Counters and the request log of one ``LoopbackServer``; every field lives inside `state`.
final class ServerStatistics: Sendable {
    private struct State {
        var connectionsAccepted = 0
        var openConnections = 0
        var peakOpenConnections = 0
        var requests: [ServerRequest] = []
        var disconnectsDuringResponse = 0
        var inFlight: [String: Int] = [:]
        var peakInFlight: [String: Int] = [:]
    }

    private let state = Mutex(State())

    // MARK: Recording (called by the connection handlers)

    func connectionOpened() {
        state.withLock { state in
            state.connectionsAccepted += 1
            state.openConnections += 1
            state.peakOpenConnections = max(state.peakOpenConnections, state.openConnections)
        }
    }

    func connectionClosed() {
        state.withLock { $0.openConnections -= 1 }
    }

    /// Records a fully read request and counts its handler as running.
    func requestReceived(_ request: ServerRequest) {
        state.withLock { state in
            state.requests.append(request)
            let running = state.inFlight[request.path, default: 0] + 1
            state.inFlight[request.path] = running
            state.peakInFlight[request.path] = max(state.peakInFlight[request.path, default: 0], running)
        }
    }

    /// Counts the handler (and, for streams, its body) for `path` as done.
    func handlerFinished(path: String) {
        state.withLock { state in
            let running = state.inFlight[path, default: 0] - 1
            state.inFlight[path] = running > 0 ? running : nil
        }
    }

    func clientDisconnectedDuringResponse() {
        state.withLock { $0.disconnectsDuringResponse += 1 }
    }

    /// Zeroes counters and drops recorded requests. Open connections and running handlers are
    /// live state and stay; the peaks restart from what is running now.
    func reset() {
        state.withLock { state in
            state.connectionsAccepted = 0
            state.requests = []
            state.disconnectsDuringResponse = 0
            state.peakInFlight = state.inFlight
            state.peakOpenConnections = state.openConnections
        }
    }

    // MARK: Reading

    var connectionsAccepted: Int { state.withLock { $0.connectionsAccepted } }
    var openConnections: Int { state.withLock { $0.openConnections } }
    var peakOpenConnections: Int { state.withLock { $0.peakOpenConnections } }
    var requests: [ServerRequest] { state.withLock { $0.requests } }
    var requestCount: Int { state.withLock { $0.requests.count } }
    var disconnectsDuringResponse: Int { state.withLock { $0.disconnectsDuringResponse } }

    func requests(path: String) -> [ServerRequest] {
        state.withLock { $0.requests.filter { $0.path == path } }
    }

    func inFlight(path: String) -> Int {
        state.withLock { $0.inFlight[path, default: 0] }
    }

    func peakInFlight(path: String) -> Int {
        state.withLock { $0.peakInFlight[path, default: 0] }
    }
}
