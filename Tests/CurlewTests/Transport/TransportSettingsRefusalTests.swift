import Curlew
import Foundation
import LoopbackServer
import Testing
import TestSupport

/// Transport settings the engine cannot honour are refused with a typed error naming the
/// setting, not clamped: libcurl reads a connection limit of 0 as "no limit", a cached
/// connection count below 1 became 1, a jitter of 5 became 1, and an engine count of 0 stopped
/// the process with a precondition failure.
@Suite("Transport settings out of range", .timeLimit(.minutes(1)))
struct TransportSettingsRefusalTests {
    static let refused: [(String, CurlTransport.Configuration)] = [
        ("engineCount must be at least 1 (nil runs one engine per processor), not 0", .init(engineCount: 0)),
        ("maximumCachedConnections must be at least 1, not 0", .init(maximumCachedConnections: 0)),
        ("maximumConnectionsPerHost must be at least 1 (nil for no limit), not 0", .init(maximumConnectionsPerHost: 0)),
        ("maximumTotalConnections must be at least 1 (nil for no limit), not -4", .init(maximumTotalConnections: -4)),
        ("idleConnectionTimeout must be longer than zero, not 0.0 seconds", .init(idleConnectionTimeout: .zero)),
        (
            "connectRetry.maximumAttempts must be at least 1 (1 turns connection retries off), not 0",
            .init(connectRetry: ConnectRetryPolicy(maximumAttempts: 0))
        ),
        ("connectRetry.initialDelay must be zero or more, not -0.05 seconds", .init(connectRetry: ConnectRetryPolicy(initialDelay: .milliseconds(-50)))),
        ("connectRetry.maximumDelay must be zero or more, not -1.0 seconds", .init(connectRetry: ConnectRetryPolicy(maximumDelay: .seconds(-1)))),
        ("idleConnectionTimeout must be at most 365 days, not 9.223372036854776e+18 seconds", .init(idleConnectionTimeout: .seconds(Int64.max))),
        (
            "connectRetry.initialDelay must be at most 365 days, not 9.223372036854776e+18 seconds",
            .init(connectRetry: ConnectRetryPolicy(initialDelay: .seconds(Int64.max)))
        ),
        (
            "connectRetry.maximumDelay must be at most 365 days, not 9.223372036854776e+18 seconds",
            .init(connectRetry: ConnectRetryPolicy(maximumDelay: .seconds(Int64.max)))
        ),
        ("connectRetry.jitter must be between 0 and 1, not 5.0", .init(connectRetry: ConnectRetryPolicy(jitter: 5))),
        ("connectRetry.jitter must be between 0 and 1, not nan", .init(connectRetry: ConnectRetryPolicy(jitter: .nan))),
    ]

    @Test(arguments: 0..<refused.count)
    func aTransportWithASettingOutOfRangeFailsEveryCallUnsent(case index: Int) async throws {
        let (message, configuration) = Self.refused[index]
        let server = try await LoopbackServer.start(handler: { .text($0.path) })
        let transport = CurlTransport(configuration: configuration)
        let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL), transport: transport)
        for path in ["first", "second"] {
            let error = await #expect(throws: CurlewError.self) { try await client.send(Send(path: path)) }
            #expect(error?.code == .invalidConnectionSettings)
            #expect(error?.stage == .configuration)
            #expect(error?.message == "CurlTransport.Configuration.\(message); nothing was sent")
            #expect(error?.request?.description == "GET \(server.baseURL)/\(path)")
        }
        #expect(server.requestCount == 0)
        // A refused transport still shuts down like any other.
        await transport.shutdown()
        await server.shutdown()
    }

    @Test func theLimitsAtTheirSmallestAreAccepted() async throws {
        let configuration = CurlTransport.Configuration(
            maximumCachedConnections: 1, maximumConnectionsPerHost: 1, maximumTotalConnections: 1, engineCount: 1,
            idleConnectionTimeout: .milliseconds(1), connectRetry: ConnectRetryPolicy(maximumAttempts: 1, initialDelay: .zero, maximumDelay: .zero, jitter: 0))
        try await withLoopback(transportConfiguration: configuration, handler: { .text($0.path) }) { server, client, _ in
            let answer = try await client.send(Send(path: "smallest"))
            #expect(answer == "/smallest")
            #expect(server.requestCount == 1)
        }
    }

    /// A request's own number of connection attempts below 1 is refused the same way (it counted
    /// as 1); 1 is accepted.
    @Test(arguments: [0, -3, 1])
    func aRequestAskingForFewerThanOneConnectAttemptFailsUnsent(attempts: Int) async throws {
        var options = TransferOptions()
        options.maximumConnectAttempts = attempts
        try await withLoopback(transferOptions: options, handler: { .text($0.path) }) { server, client, _ in
            guard attempts < 1 else {
                let answer = try await client.send(Send(path: "one"))
                #expect(answer == "/one")
                #expect(server.requestCount == 1)
                return
            }
            let error = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "attempts")) }
            #expect(error?.code == .invalidConnectionSettings)
            #expect(error?.message == "maximumConnectAttempts must be at least 1 (1 turns connection retries off), not \(attempts); nothing was sent")
            #expect(server.requestCount == 0)
        }
    }

    /// A negative body limit or redirect limit is refused too (every body was "too large"; a
    /// negative redirect limit returned 3xx answers as 0 does).
    static let limits: [(String, @Sendable (inout TransferOptions) -> Void)] = [
        ("maximumBodySize must be zero or more, not -1", { $0.maximumBodySize = -1 }),
        ("redirectLimit must be zero or more (0 returns 3xx answers as they are), not -2", { $0.redirectLimit = -2 }),
    ]

    @Test(arguments: 0..<limits.count)
    func aNegativeBodyOrRedirectLimitFailsUnsent(case index: Int) async throws {
        let (message, change) = Self.limits[index]
        var options = TransferOptions()
        change(&options)
        try await withLoopback(transferOptions: options, handler: { .text($0.path) }) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "limits")) }
            #expect(error?.code == .invalidConnectionSettings)
            #expect(error?.message == "\(message); nothing was sent")
            #expect(server.requestCount == 0)
        }
    }
}
