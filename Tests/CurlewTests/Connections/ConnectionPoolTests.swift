@testable import Curlew
@testable import CurlewCore
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// The connection cache under a service's fan-out, and connections the server closed.
@Suite("Connection pool", .timeLimit(.minutes(2)))
struct ConnectionPoolTests {
    /// 192 transfers in flight (64 incoming requests × 3 upstream calls) over HTTP/1.1, three
    /// waves: the first opens the connections, the next two reuse every one of them. (With a
    /// fixed cache of 128 the engine used to close 64 connections after each wave and open them
    /// again in the next.) The server answers a wave only once all 192 of its requests have
    /// arrived, so every wave holds 192 connections at once however fast either side runs.
    @Test func aFanOutOf192TransfersReusesItsConnectionsWaveAfterWave() async throws {
        let arrivals = Mutex(0)
        try await withLoopback(handler: { _ in
            let arrival = arrivals.withLock { count in
                count += 1
                return count
            }
            let waveEnd = ((arrival - 1) / 192 + 1) * 192
            while arrivals.withLock({ $0 }) < waveEnd { try? await Task.sleep(for: .milliseconds(5)) }
            return .text("ok")
        }) { server, client, _ in
            func wave() async throws {
                try await withThrowingTaskGroup(of: String.self) { group in
                    for index in 0..<192 { group.addTask { try await client.send(Numbered(index: index)) } }
                    for try await answer in group { #expect(answer == "ok") }
                }
            }
            try await wave()
            #expect(server.connectionsAccepted == 192)
            try await wave()
            try await wave()
            #expect(server.requestCount == 3 * 192)
            #expect(server.connectionsAccepted == 192, "no churn: later waves opened no connection")
        }
    }

    /// nginx closes idle keep-alive connections after one second; the engine notices and closes
    /// its end while idle, instead of leaving them half-closed (`CLOSE_WAIT`) until the next
    /// request.
    @Test func connectionsTheServerClosedDoNotLingerInCloseWait() async throws {
        let servers = try ConnectionServers.fromEnvironment()
        let port = ConnectionServers.port(of: servers.shortKeepAliveURL)
        try await withTransport { transport in
            let client = connectionClient(servers.shortKeepAliveURL, ConnectionOptions(), transport: transport, httpVersion: .http1Only)
            let started = ContinuousClock.now
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<8 { group.addTask { _ = try await client.send(ConnectionProbe()) } }
                try await group.waitForAll()
            }
            let open = TCPSockets.count(remotePort: port, states: [.established, .closeWait])
            // Pooled connections exist — provable only while nginx's one-second idle timer cannot
            // have run out yet (a loaded machine can take longer than that for the wave).
            if ContinuousClock.now - started < .milliseconds(900) {
                #expect(open > 0)
            }
            // nginx closes them after 1 s; the engine's sweep (every second while quiet) closes
            // its side. Without it they stay in CLOSE_WAIT for as long as the transport is idle.
            let gone = await eventually(within: 6) { TCPSockets.count(remotePort: port, states: [.established, .closeWait]) == 0 }
            #expect(gone, "\(TCPSockets.count(remotePort: port, states: [.closeWait])) sockets still in CLOSE_WAIT")
            // The pool is healthy afterwards: a new request opens a new connection.
            let answer = try await client.response(for: ConnectionProbe())
            #expect(answer.metrics?.reusedConnection == false)
        }
    }

    @Test func theCacheLimitFollowsTransfersInFlightAndFallsBackAfterAMinute() {
        var sizing = ConnectionCacheSizing(floor: 128)
        let second: UInt64 = 1_000_000_000
        #expect(sizing.limit == 128)
        #expect(sizing.update(inFlight: 10, now: 1 * second) == nil)
        #expect(sizing.update(inFlight: 192, now: 2 * second) == 768)
        // The dip between two waves changes nothing.
        #expect(sizing.update(inFlight: 3, now: 3 * second) == nil)
        #expect(sizing.update(inFlight: 192, now: 30 * second) == nil)
        #expect(sizing.limit == 768)
        // A minute below what the limit was last needed for: back down.
        #expect(sizing.update(inFlight: 40, now: 89 * second) == nil)
        #expect(sizing.update(inFlight: 40, now: 91 * second) == 160)
        #expect(sizing.limit == 160)
        #expect(sizing.update(inFlight: 1, now: 200 * second) == 128)
        #expect(ConnectionCacheSizing(floor: 0).limit == 1)
    }
}

/// Sockets of this network namespace, from `/proc/net/tcp` (IPv4).
enum TCPSockets {
    enum State: String {
        case established = "01"
        case closeWait = "08"
    }

    /// Sockets whose remote end is 127.0.0.1:`remotePort` and whose state is one of `states`.
    static func count(remotePort: Int, states: Set<State>) -> Int {
        // procfs files report a size of 0: read to the end.
        guard let handle = FileHandle(forReadingAtPath: "/proc/net/tcp") else { return -1 }
        defer { try? handle.close() }
        let table = String(decoding: handle.readDataToEndOfFile(), as: UTF8.self)
        let wantedStates = Set(states.map(\.rawValue))
        let hex = String(remotePort, radix: 16, uppercase: true)
        let remote = "0100007F:" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
        return table.split(separator: "\n").dropFirst().filter { line in
            let fields = line.split(separator: " ")
            return fields.count > 3 && fields[2] == remote && wantedStates.contains(String(fields[3]))
        }.count
    }
}
