import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import LoopbackServer
import TestSupport
import Testing
#if canImport(Glibc)
    import Glibc
#endif

/// Waits for the response head; its own endpoint type sets a head timeout of 300 ms.
struct SlowHeadRequest: Endpoint {
    typealias Response = String
    var path: String { "slow-head" }
    var options: RequestOptions {
        var options = RequestOptions()
        options.headTimeout = .milliseconds(300)
        return options
    }
}

/// Four timeouts, four error codes: each against a server that stalls at that point, the
/// client's own limits generous (a minute) so only the one under test can fire.
@Suite("Timeout kinds: connect, head, stall, total")
struct TimeoutKindTests {
    static var generous: TransferOptions {
        var options = TransferOptions()
        options.connectTimeout = .seconds(60)
        options.headTimeout = .seconds(60)
        options.idleTimeout = .seconds(60)
        options.totalTimeout = .seconds(120)
        return options
    }

    /// Sends the head and one byte, then one byte every 50 ms until the client goes.
    static let trickle: @Sendable (ServerRequest) async -> ServerResponse = { _ in
        .stream { writer in
            while true {
                try await writer.write("x")
                try await Task.sleep(for: .milliseconds(50))
            }
        }
    }

    /// Sends the head and a first chunk, then nothing until the client goes.
    static let stallAfterHead: @Sendable (ServerRequest) async -> ServerResponse = { request in
        .stream { writer in
            try await writer.write("first chunk")
            await request.connection.closed()
        }
    }

    /// The head watch as a value, on nanoseconds of a test's own: bytes sent restart its clock,
    /// a pause restarts it, the first head byte ends it for good (a stall after the head is the
    /// idle timeout's).
    @Test func theHeadWatchCountsFromTheLastByteSentAndEndsWithTheHead() {
        let ms: UInt64 = 1_000_000
        var watch = HeadWatch(timeoutNanoseconds: 300 * ms, now: 0)
        let sending = [
            watch.observe(headBytes: 0, bytesSent: 0, paused: false, now: 200 * ms),
            watch.observe(headBytes: 0, bytesSent: 4096, paused: false, now: 250 * ms),  // still sending
            watch.observe(headBytes: 0, bytesSent: 4096, paused: false, now: 500 * ms),
            watch.observe(headBytes: 0, bytesSent: 4096, paused: false, now: 551 * ms),  // 301 ms after the last byte sent
        ]
        #expect(sending == [false, false, false, true])
        var paused = HeadWatch(timeoutNanoseconds: 300 * ms, now: 0)
        let pausing = [
            paused.observe(headBytes: 0, bytesSent: 0, paused: true, now: 400 * ms),
            paused.observe(headBytes: 0, bytesSent: 0, paused: false, now: 600 * ms),
            paused.observe(headBytes: 0, bytesSent: 0, paused: false, now: 701 * ms),
        ]
        #expect(pausing == [false, false, true])
        var answered = HeadWatch(timeoutNanoseconds: 300 * ms, now: 0)
        var afterHead = [
            answered.observe(headBytes: 17, bytesSent: 0, paused: false, now: 100 * ms),
            answered.observe(headBytes: 17, bytesSent: 0, paused: false, now: 10_000 * ms),
        ]
        answered.restart(now: 20_000 * ms)
        afterHead.append(answered.observe(headBytes: 17, bytesSent: 0, paused: false, now: 90_000 * ms))
        #expect(afterHead == [false, false, false])
        #expect(answered.ended)
    }

    @Test func aConnectThatNeverCompletesIsAConnectTimeoutPerCall() async throws {
        let blackhole = try BlackholeListener()
        defer { blackhole.close() }
        try await withTransport { transport in
            let client = APIClient(configuration: ClientConfiguration(baseURL: blackhole.baseURL, transferOptions: Self.generous), transport: transport)
            let error = await #expect(throws: CurlewError.self) {
                try await client.send(Numbered(index: 1)) { $0.connectTimeout = .milliseconds(200) }
            }
            #expect(error?.code == .connectTimeout)
        }
    }

    @Test func aServerThatNeverAnswersIsAHeadTimeoutFromTheEndpointType() async throws {
        try await withLoopback(transferOptions: Self.generous, handler: FailureTests.hold) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.send(SlowHeadRequest()) }
            #expect(error?.code == .headTimeout)
            #expect(server.requestCount == 1)
            #expect(await eventually { server.disconnectsDuringResponse == 1 })
        }
    }

    @Test func aHeadTimeoutOfTheClient() async throws {
        var options = Self.generous
        options.headTimeout = .milliseconds(300)
        try await withLoopback(transferOptions: options, handler: FailureTests.hold) { _, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.send(Numbered(index: 1)) }
            #expect(error?.code == .headTimeout)
        }
    }

    @Test func aStallAfterTheHeadIsAnIdleTimeoutNotAHeadTimeout() async throws {
        try await withLoopback(transferOptions: Self.generous, handler: Self.stallAfterHead) { _, client, _ in
            let error = await #expect(throws: CurlewError.self) {
                try await client.send(Numbered(index: 1)) {
                    $0.headTimeout = .seconds(30)
                    $0.idleTimeout = .milliseconds(400)
                }
            }
            #expect(error?.code == .idleTimeout)
        }
    }

    @Test func aBodyThatKeepsComingTooLongIsATotalTimeout() async throws {
        try await withLoopback(transferOptions: Self.generous, handler: Self.trickle) { _, client, _ in
            let error = await #expect(throws: CurlewError.self) {
                try await client.send(Numbered(index: 1)) {
                    $0.headTimeout = .seconds(30)
                    $0.idleTimeout = .seconds(5)
                    $0.totalTimeout = .milliseconds(600)
                }
            }
            #expect(error?.code == .totalTimeout)
        }
    }

    /// An upload the server stops reading (a listener that never accepts: the kernel takes the
    /// connection and a few megabytes of the body, then the upload stalls) is a stall while
    /// sending: `.idleTimeout` in the send phase, its message naming the limit. libcurl's timings
    /// alone made it look like a stalled response (phase `receive`).
    @Test func anUploadTheServerStopsReadingIsAnIdleTimeoutWhileSending() async throws {
        let (listener, port) = try ListeningSocket.open(backlog: 16)
        defer { Glibc.close(listener) }
        var options = Self.generous
        options.idleTimeout = .milliseconds(500)
        try await withTransport { transport in
            let client = APIClient(configuration: ClientConfiguration(baseURL: "http://127.0.0.1:\(port)", transferOptions: options), transport: transport)
            let error = await #expect(throws: CurlewError.self) {
                try await client.send(Send(method: .post, path: "upload", body: .data(Data(count: 64 << 20))))
            }
            #expect(error?.code == .idleTimeout)
            #expect(error?.message == "no data moved for 500 ms")
            #expect(error?.transportPhase == .send)
            #expect(error?.metrics?.bytesReceived == 0)
        }
    }

    /// A timeout of zero or less is a mistake, not a limit: libcurl would read it as one
    /// millisecond (a total timeout fired after the request had gone out) or as none. It is
    /// refused before anything is sent, naming the timeout.
    @Test(arguments: [
        ("connectTimeout", Duration.zero), ("connectTimeout", .seconds(-5)), ("headTimeout", .zero), ("headTimeout", .milliseconds(-1)),
        ("idleTimeout", .zero), ("idleTimeout", .seconds(-5)), ("totalTimeout", .zero), ("totalTimeout", .seconds(-5)),
    ])
    func aTimeoutOfZeroOrLessIsRefusedAndNothingIsSent(_ name: String, _ value: Duration) async throws {
        try await withLoopback(handler: DeadlineTests.echoPath) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) {
                try await client.send(Send(method: .post, path: "order", body: .text("one"))) { Self.set(name, to: value, in: &$0) }
            }
            #expect(error?.code == .invalidConnectionSettings)
            #expect(error?.level == .invalidRequest)
            #expect(error?.message == "\(name) must be longer than zero, not \(value); nothing was sent")
            #expect(server.requestCount == 0)
            // Under a deadline too: the time left replaces only a longer total timeout.
            let underDeadline = await #expect(throws: CurlewError.self) {
                try await withDeadline(in: .seconds(60)) { try await client.send(Numbered(index: 1)) { $0.totalTimeout = .zero } }
            }
            #expect(underDeadline?.code == .invalidConnectionSettings)
            #expect(server.requestCount == 0)
        }
    }

    /// A timeout too long to count in milliseconds (`.seconds(Int64.max)`) stopped the process
    /// when the engine converted it; past 365 days it is refused, naming the timeout.
    @Test(arguments: ["connectTimeout", "headTimeout", "idleTimeout", "totalTimeout"])
    func aTimeoutLongerThanAYearIsRefusedAndNothingIsSent(_ name: String) async throws {
        try await withLoopback(handler: DeadlineTests.echoPath) { server, client, _ in
            for value in [Duration.seconds(Int64.max), .seconds(365 * 86_400 + 1)] {
                let error = await #expect(throws: CurlewError.self) {
                    try await client.send(Send(method: .post, path: "order", body: .text("one"))) { Self.set(name, to: value, in: &$0) }
                }
                #expect(error?.code == .invalidConnectionSettings)
                #expect(error?.message == "\(name) must be at most 365 days (nil for no limit), not \(value); nothing was sent")
            }
            #expect(server.requestCount == 0)
            let year = try await client.send(Send(path: "year")) { $0.totalTimeout = .seconds(365 * 86_400) }
            #expect(year == "/year")
        }
    }

    /// Sets the timeout called `name`.
    static func set(_ name: String, to value: Duration, in options: inout RequestOptions) {
        switch name {
        case "connectTimeout": options.connectTimeout = value
        case "headTimeout": options.headTimeout = value
        case "idleTimeout": options.idleTimeout = value
        default: options.totalTimeout = value
        }
    }
}
