@testable import Curlew
@testable import CurlewCore
import CCurlShim
import Foundation
import LoopbackServer
import Testing
import TestSupport

/// Timings, bytes, reuse, HTTP version and redirects on responses and on failures, and the phase
/// a transport failure names — against the loopback server.
@Suite("Transfer facts on responses and failures", .timeLimit(.minutes(2)))
struct TransferFactsTests {
    @Test func aResponseCarriesOrderedTimingsBytesReuseVersionRedirectsAndPeer() async throws {
        var router = LoopbackRouter()
        router.on("GET", "/start") { _, _ in .redirect(to: "/final") }
        router.on("GET", "/final") { _, _ in .text("twelve bytes") }
        try await withLoopback(router: router) { server, client, _ in
            // A fresh connection: every milestone in order.
            let first = try await client.response(for: Send(path: "final"))
            let metrics = try #require(first.metrics)
            #expect(first.value == "twelve bytes")
            #expect(metrics.redirectCount == 0)
            #expect(!metrics.reusedConnection)
            #expect(metrics.httpVersion == "1.1")
            #expect(metrics.nameLookup <= metrics.connect)
            #expect(metrics.connect <= metrics.pretransfer)
            #expect(metrics.pretransfer <= metrics.firstByte)
            #expect(metrics.firstByte <= metrics.total)
            #expect(metrics.total > .zero)
            #expect(metrics.tlsHandshake == .zero)
            #expect(metrics.bytesSent > 0)
            #expect(metrics.bytesReceived > 12)
            #expect(metrics.remoteAddress == "127.0.0.1")
            #expect(metrics.remotePort == server.port)

            // Redirected (followed by Curlew, one transfer per hop): the last hop's facts, on the
            // reused connection, with the hops counted.
            let second = try await client.response(for: Send(path: "start"))
            let reused = try #require(second.metrics)
            #expect(second.value == "twelve bytes")
            #expect(reused.reusedConnection)
            #expect(reused.redirectCount == 1)
            #expect(reused.firstByte <= reused.total)
            #expect(server.requests.map(\.uri) == ["/final", "/start", "/final"])
        }
    }

    @Test func aRefusedConnectionNamesTheConnectPhaseAndCarriesItsTimings() async throws {
        let transport = CurlTransport()
        defer { Task { await transport.shutdown() } }
        let client = APIClient(baseURL: refusingBaseURL + "/gone", transport: transport)
        let error = try await #require(throws: CurlewError.self) { try await client.send(Send(path: "")) }
        #expect(error.code == .cannotConnect)
        #expect(error.transportPhase == .connect)
        #expect(error.stage == .transport)
        let metrics = try #require(error.metrics)
        #expect(metrics.firstByte == .zero)
        #expect(metrics.reusedConnection == false)
        #expect(String(describing: error).contains("[phase connect]"))
    }

    @Test func aServerThatNeverAnswersTimesOutInTheSendPhase() async throws {
        var options = TransferOptions()
        options.totalTimeout = .seconds(2)
        try await withLoopback(
            transferOptions: options,
            handler: { _ in
                try? await Task.sleep(for: .seconds(6))
                return .text("late")
            }
        ) { _, client, _ in
            let error = try await #require(throws: CurlewError.self) { try await client.send(Send(path: "slow")) }
            #expect(error.code == .totalTimeout)
            #expect(error.transportPhase == .send)
            let metrics = try #require(error.metrics)
            #expect(metrics.pretransfer > .zero)
            #expect(metrics.firstByte == .zero)
            #expect(metrics.bytesSent > 0)
        }
    }

    @Test func aBodyThatStallsAfterItsHeadFailsInTheReceivePhase() async throws {
        var options = TransferOptions()
        // Long enough for the head to come however loaded the machine is (3 s was not, once).
        options.idleTimeout = .seconds(8)
        try await withLoopback(
            transferOptions: options,
            handler: { request in
                .stream(headers: [("Content-Length", "100")]) { writer in
                    try await writer.write("first ten.")
                    // Stalls until the client gives up (no race between a server sleep and the timeout).
                    await request.connection.closed()
                }
            }
        ) { _, client, _ in
            // Streamed, so the first bytes are in hand before the stall: the failure can only
            // come after the first byte, however slow the machine.
            let response = try await client.stream(Send(path: "stall"))
            var received = 0
            let error = try await #require(throws: CurlewError.self) {
                for try await chunk in response.value { received += chunk.count }
            }
            #expect(received == 10)
            #expect(error.code == .idleTimeout)
            #expect(error.transportPhase == .receive)
            let metrics = try #require(error.metrics)
            #expect(metrics.firstByte > .zero)
            #expect(metrics.bytesReceived >= 10)
        }
    }

    @Test func aRefusedStatusCarriesTheExchangesMetricsButNoPhase() async throws {
        try await withLoopback(handler: { _ in .text("nope", status: 500) }) { _, client, _ in
            let error = try await #require(throws: CurlewError.self) { try await client.send(Send(path: "fail")) }
            #expect(error.status?.code == 500)
            #expect(error.transportPhase == nil)
            let metrics = try #require(error.metrics)
            #expect(metrics.httpVersion == "1.1")
            #expect(metrics.bytesReceived > 4)
        }
    }

    @Test func phasesFollowCurlCodesFirstThenTheLastMilestoneReached() {
        typealias Phase = CurlewError.TransportPhase
        #expect(Phase.infer(curlCode: CURLE_COULDNT_RESOLVE_HOST, metrics: nil, isTLS: false) == .dns)
        #expect(Phase.infer(curlCode: CURLE_PEER_FAILED_VERIFICATION, metrics: nil, isTLS: true) == .tls)
        #expect(Phase.infer(curlCode: CURLE_SEND_ERROR, metrics: nil, isTLS: false) == .send)
        #expect(Phase.infer(curlCode: CURLE_RECV_ERROR, metrics: nil, isTLS: false) == .receive)
        #expect(Phase.infer(curlCode: CURLE_OPERATION_TIMEDOUT, metrics: nil, isTLS: false) == nil)
        let resolving = TransferMetrics()
        #expect(Phase.infer(curlCode: CURLE_OPERATION_TIMEDOUT, metrics: resolving, isTLS: false) == .dns)
        let connecting = TransferMetrics(nameLookup: .milliseconds(1))
        #expect(Phase.infer(curlCode: CURLE_OPERATION_TIMEDOUT, metrics: connecting, isTLS: true) == .connect)
        let handshaking = TransferMetrics(nameLookup: .milliseconds(1), connect: .milliseconds(2))
        #expect(Phase.infer(curlCode: CURLE_OPERATION_TIMEDOUT, metrics: handshaking, isTLS: true) == .tls)
        #expect(Phase.infer(curlCode: CURLE_OPERATION_TIMEDOUT, metrics: handshaking, isTLS: false) == .connect)
        let reused = TransferMetrics(reusedConnection: true)
        #expect(Phase.infer(curlCode: CURLE_OPERATION_TIMEDOUT, metrics: reused, isTLS: true) == .send)
    }
}
