import Curlew
import Foundation
import Logging
import LoopbackServer
import Testing
import TestSupport

/// Curlew's log lines carry the caller's metadata: a per-call logger, or the task-local one.
@Suite("Logging with the caller's metadata", .timeLimit(.minutes(2)))
struct CallLoggingTests {
    struct LoggedPing: Endpoint {
        typealias Response = String
        var path: String { "ping" }
    }

    @Test func aPerCallLoggerReceivesCurlewsLineWithItsRequestID() async throws {
        let capture = LogCapture()
        try await withLoopback(handler: { _ in .text("pong") }) { _, client, _ in
            var incoming = capture.logger(level: .debug)
            incoming[metadataKey: "hb.request.id"] = "req-42"
            _ = try await client.send(LoggedPing()) { $0.logger = incoming }
        }
        let lines = capture.all.filter { $0.message.contains("/ping → 200") }
        #expect(lines.count == 1)
        #expect(lines.first?.level == .debug)
        #expect(lines.first?.metadata["hb.request.id"] == "req-42")
    }

    @Test func theTaskLocalLoggersMetadataIsMergedIntoTheClientsLogger() async throws {
        let capture = LogCapture()
        let server = try await LoopbackServer.start { _ in .text("pong", status: 503) }
        let transport = CurlTransport()
        let client = APIClient(
            configuration: ClientConfiguration(baseURL: server.baseURL, logger: capture.logger(label: "curlew", level: .debug)),
            transport: transport)
        var scoped = Logger(label: "incoming")
        scoped[metadataKey: "hb.request.id"] = "req-7"
        await withLogger(scoped) { _ in
            _ = try? await client.send(LoggedPing())
        }
        _ = try? await client.send(LoggedPing())
        let lines = capture.all.filter { $0.message.contains("unacceptableStatus") }
        #expect(lines.count == 2)
        #expect(lines.first?.metadata["hb.request.id"] == "req-7")
        #expect(lines.last?.metadata["hb.request.id"] == nil, "outside the scope nothing is merged")
        await transport.shutdown()
        await server.shutdown()
    }
}
