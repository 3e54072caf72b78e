@testable import Curlew
@testable import CurlewCore
import Foundation
import Synchronization
import Testing
import TestSupport
#if canImport(Glibc)
    import Glibc
#endif

/// Accepts every connection, waits for the client's first bytes (a TLS ClientHello) and resets
/// the connection (`SO_LINGER` 0): a TLS handshake reset.
private final class HandshakeResetter: Sendable {
    let port: Int
    private let listener: Int32
    private let accepted = Mutex(0)
    /// Whether `listener` is still open. Once the accept loop closed it, its number may belong to
    /// another socket (a libcurl connection of a parallel test), which `stop()` must not shut down.
    private let listening = Mutex(true)

    init() throws {
        (listener, port) = try ListeningSocket.open(backlog: 16)
        let server = self
        Thread.detachNewThread { server.acceptLoop() }
    }

    var connectionsAccepted: Int { accepted.withLock { $0 } }

    func stop() {
        listening.withLock { open in if open { Glibc.shutdown(listener, Int32(SHUT_RDWR)) } }
    }

    private func acceptLoop() {
        defer {
            listening.withLock { open in
                open = false
                close(listener)
            }
        }
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            accepted.withLock { $0 += 1 }
            var buffer = [UInt8](repeating: 0, count: 4096)
            _ = recv(connection, &buffer, buffer.count, 0)
            var reset = linger(l_onoff: 1, l_linger: 0)
            setsockopt(connection, SOL_SOCKET, SO_LINGER, &reset, socklen_t(MemoryLayout<linger>.size))
            close(connection)
        }
    }
}

/// Connection establishment retried with back-off within the call's total timeout (issue 31,
/// item 3).
@Suite("Connect retries")
struct ConnectRetryTests {
    @Test func callsDuringATwoSecondOutageAllSucceed() async throws {
        let upstream = try ClosedPort()
        // The default's ten attempts back off for about 4.4–5.5 s in all, enough for the two
        // seconds of outage; but when the whole suite runs in parallel this test's own task can
        // wait seconds for a thread before it opens the port, so the outage it makes can last
        // longer. Thirty attempts (the same back-off) keep the test about retrying.
        let transport = CurlTransport(configuration: .init(engineCount: 2, connectRetry: ConnectRetryPolicy(maximumAttempts: 30)))
        let client = APIClient(baseURL: upstream.baseURL, transport: transport)
        let events = client.events
        let calls = 20
        // The upstream is down when every call starts; it comes back two seconds after they
        // started (counted from the start, not from when the retries were seen: on a loaded
        // machine seeing them can take a while, and the outage must stay two seconds long).
        let started = ContinuousClock.now
        let results = try await withThrowingTaskGroup(of: String.self) { group in
            for index in 0..<calls {
                group.addTask { try await client.send(Numbered(index: index)) { $0.totalTimeout = .seconds(30) } }
            }
            #expect(await eventually { transport.statistics.connectRetries >= calls })
            try await Task.sleep(until: started + .seconds(2))
            let server = try upstream.listen { _, request in .ok(String(request.path.dropFirst("/n/".count))) }
            var answers: [String] = []
            for try await answer in group { answers.append(answer) }
            #expect(server.requests.count == calls)
            server.stop()
            return answers
        }
        #expect(results.count == calls, "zero failed calls")
        #expect(Set(results) == Set((0..<calls).map(String.init)))
        let retries = transport.statistics.connectRetries
        // Each call retried at least once, and no more than its thirty attempts allow.
        #expect(retries >= calls)
        #expect(retries <= calls * 29)
        #expect(transport.connectionStatistics.connectRetries == retries)
        // Every retry was published as an event.
        var published = 0
        for await event in events {
            if event.kind == .connectRetryScheduled {
                published += 1
                #expect(event.error?.code == .cannotConnect)
                #expect((event.attempt ?? 0) >= 2)
            }
            if published == retries { break }
        }
        #expect(published == retries)
        await transport.shutdown()
    }

    @Test func retriesStopWithinTheTotalTimeout() async throws {
        let upstream = try ClosedPort()
        let transport = CurlTransport(configuration: .init(engineCount: 1))
        let client = APIClient(baseURL: upstream.baseURL, transport: transport)
        let error = await #expect(throws: CurlewError.self) {
            try await client.send(Numbered(index: 1)) { $0.totalTimeout = .milliseconds(300) }
        }
        // Delays of 50, 100, 200 ms (±20 %) fit into 300 ms two or three times; the next would
        // start after the total timeout, so the call fails with the connection error instead.
        #expect(error?.code == .cannotConnect)
        let retries = transport.statistics.connectRetries
        #expect(retries >= 2 && retries <= 3)
        #expect(error?.message.contains("after \(retries + 1) connection attempts") == true)
        await transport.shutdown()
    }

    @Test func retriesStopAtTheMaximumAttempts() async throws {
        let upstream = try ClosedPort()
        let policy = ConnectRetryPolicy(maximumAttempts: 4, initialDelay: .milliseconds(1), maximumDelay: .milliseconds(5))
        let transport = CurlTransport(configuration: .init(engineCount: 1, connectRetry: policy))
        let client = APIClient(baseURL: upstream.baseURL, transport: transport)
        let error = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 1)) }
        #expect(error?.code == .cannotConnect)
        #expect(transport.statistics.connectRetries == 3)
        #expect(error?.message.contains("after 4 connection attempts") == true)
        await transport.shutdown()
    }

    @Test func aResetTLSHandshakeIsRetried() async throws {
        let upstream = try HandshakeResetter()
        defer { upstream.stop() }
        let policy = ConnectRetryPolicy(maximumAttempts: 3, initialDelay: .milliseconds(1), maximumDelay: .milliseconds(5))
        let transport = CurlTransport(configuration: .init(engineCount: 1, connectRetry: policy))
        let client = APIClient(baseURL: "https://127.0.0.1:\(upstream.port)", transport: transport)
        let error = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 1)) }
        // Every attempt reached the server and was reset during the handshake: three in all.
        #expect(transport.statistics.connectRetries == 2)
        #expect(upstream.connectionsAccepted == 3)
        #expect(error?.message.contains("after 3 connection attempts") == true)
        #expect(error?.transportPhase == .tls || error?.transportPhase == .connect)
        await transport.shutdown()
    }

    @Test func disabledRetriesFailAtOnce() async throws {
        let upstream = try ClosedPort()
        let transport = CurlTransport(configuration: .init(engineCount: 1, connectRetry: .disabled))
        let client = APIClient(baseURL: upstream.baseURL, transport: transport)
        let error = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 1)) }
        #expect(error?.code == .cannotConnect)
        #expect(transport.statistics.connectRetries == 0)
        #expect(error?.message.contains("connection attempts") == false)
        await transport.shutdown()
    }

    @Test func theErrorsMetricsCountTheAttempts() async throws {
        let upstream = try ClosedPort()
        let policy = ConnectRetryPolicy(maximumAttempts: 3, initialDelay: .milliseconds(1), maximumDelay: .milliseconds(5))
        let transport = CurlTransport(configuration: .init(engineCount: 1, connectRetry: policy))
        let client = APIClient(baseURL: upstream.baseURL, transport: transport)
        let error = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 1)) }
        #expect(error?.metrics?.connectionAttempts == 3)
        // A request may choose its own maximum: 1 turns the transport's retries off for it.
        var options = TransferOptions()
        options.maximumConnectAttempts = 1
        let single = APIClient(configuration: ClientConfiguration(baseURL: upstream.baseURL, transferOptions: options), transport: transport)
        let once = await #expect(throws: CurlewError.self) { try await single.send(Numbered(index: 2)) }
        #expect(once?.code == .cannotConnect)
        #expect(once?.metrics?.connectionAttempts == 1)
        #expect(transport.statistics.connectRetries == 2)
        await transport.shutdown()
    }

    /// The transport's connect retry and the retry middleware are one mechanism: a connection the
    /// transport already retried is not retried again by the middleware (the attempts would
    /// multiply), and with the transport's retries off the middleware retries as before.
    @Test func theRetryMiddlewareDoesNotRetryAConnectionTheTransportRetried() async throws {
        let upstream = try ClosedPort()
        let policy = ConnectRetryPolicy(maximumAttempts: 3, initialDelay: .milliseconds(1), maximumDelay: .milliseconds(5))
        let transport = CurlTransport(configuration: .init(engineCount: 1, connectRetry: policy))
        let retry = RetryMiddleware(maximumAttempts: 3, baseDelay: .milliseconds(1), maximumDelay: .milliseconds(5))
        let client = APIClient(configuration: ClientConfiguration(baseURL: upstream.baseURL, middleware: [retry]), transport: transport)
        let error = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 1)) }
        #expect(error?.code == .cannotConnect)
        #expect(error?.metrics?.connectionAttempts == 3)
        #expect(transport.statistics.connectRetries == 2, "three connection attempts in all, not three times three")
        await transport.shutdown()

        let plain = CurlTransport(configuration: .init(engineCount: 1, connectRetry: .disabled))
        let retried = APIClient(configuration: ClientConfiguration(baseURL: upstream.baseURL, middleware: [retry]), transport: plain)
        let scheduled = Mutex(0)
        let events = retried.events
        let counting = Task {
            for await event in events where event.kind == .retryScheduled { scheduled.withLock { $0 += 1 } }
        }
        let again = await #expect(throws: CurlewError.self) { try await retried.send(Numbered(index: 2)) }
        #expect(again?.code == .cannotConnect)
        #expect(plain.statistics.connectRetries == 0)
        #expect(await eventually { scheduled.withLock { $0 } == 2 }, "the middleware made its three attempts")
        counting.cancel()
        await plain.shutdown()
    }

    /// Failover is the retry while another origin is left: the transport does not retry the
    /// unreachable one first; the last origin gets the transport's retries.
    @Test func failoverMovesOnWithoutTheTransportRetryingFirst() async throws {
        let primary = try ClosedPort()
        let policy = ConnectRetryPolicy(maximumAttempts: 3, initialDelay: .milliseconds(1), maximumDelay: .milliseconds(5))
        try await withLoopback(transportConfiguration: .init(engineCount: 1, connectRetry: policy), handler: { _ in .text("secondary") }) {
            secondary, _, transport in
            let failover = FailoverMiddleware(baseURLs: [primary.baseURL, secondary.baseURL])
            let client = APIClient(configuration: ClientConfiguration(baseURL: primary.baseURL, middleware: [failover]), transport: transport)
            let answer = try await client.send(Numbered(index: 1))
            #expect(answer == "secondary")
            #expect(transport.statistics.connectRetries == 0)
            #expect(secondary.requestCount == 1)
        }
        let secondary = try ClosedPort()
        let transport = CurlTransport(configuration: .init(engineCount: 1, connectRetry: policy))
        let failover = FailoverMiddleware(baseURLs: [primary.baseURL, secondary.baseURL])
        let client = APIClient(configuration: ClientConfiguration(baseURL: primary.baseURL, middleware: [failover]), transport: transport)
        let error = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 2)) }
        #expect(error?.code == .cannotConnect)
        #expect(error?.metrics?.connectionAttempts == 3)
        #expect(transport.statistics.connectRetries == 2, "only the last origin was retried")
        await transport.shutdown()
    }

    @Test func theBackOffDoublesUpToItsMaximumWithinTheJitter() {
        let policy = ConnectRetryPolicy.standard
        #expect(policy.delayNanoseconds(beforeAttempt: 2, random: 0.5) == 50_000_000)
        #expect(policy.delayNanoseconds(beforeAttempt: 3, random: 0.5) == 100_000_000)
        #expect(policy.delayNanoseconds(beforeAttempt: 6, random: 0.5) == 800_000_000)
        #expect(policy.delayNanoseconds(beforeAttempt: 7, random: 0.5) == 1_000_000_000)
        #expect(policy.delayNanoseconds(beforeAttempt: 10, random: 0.5) == 1_000_000_000)
        #expect(policy.delayNanoseconds(beforeAttempt: 2, random: 0) == 40_000_000)
        #expect(policy.delayNanoseconds(beforeAttempt: 2, random: 0.999_999_9) >= 59_999_000)
    }
}
