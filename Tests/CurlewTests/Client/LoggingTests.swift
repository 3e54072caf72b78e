import Curlew
import CurlewTesting
import Foundation
import Logging
import Synchronization
import Testing
import TestSupport

/// Collects log lines in memory.
final class MemoryLogHandlerBox: Sendable {
    let lines = Mutex<[String]>([])
}

struct MemoryLogHandler: LogHandler {
    let box: MemoryLogHandlerBox
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .debug

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        box.lines.withLock { $0.append("\(event.level) \(event.message)") }
    }
}

@Suite("Logging")
struct LoggingTests {
    @Test func oneRedactedDebugLinePerRequest() async throws {
        let box = MemoryLogHandlerBox()
        var logger = Logger(label: "test") { _ in MemoryLogHandler(box: box) }
        logger.logLevel = .debug
        let transport = MockTransport { request in
            request.url.contains("missing") ? .text("", status: .notFound, for: request) : .text("ok", for: request)
        }
        let client = APIClient(configuration: ClientConfiguration(baseURL: "https://api.test", logger: logger), transport: transport)
        _ = try await client.send(Send(path: "a", query: [URLQueryItem(name: "token", value: "T0P")], headers: ["Authorization": "Bearer S3CRET"]))
        _ = try? await client.send(Send(path: "missing"))
        let lines = box.lines.withLock { $0 }
        #expect(lines.count == 2)
        #expect(lines[0].hasPrefix("debug GET https://api.test/a?token=<redacted> → 200 in "))
        #expect(lines[1].hasPrefix("debug GET https://api.test/missing → unacceptableStatus in "))
        #expect(!lines.joined().contains("T0P"))
        #expect(!lines.joined().contains("S3CRET"))
    }

    @Test func nothingIsLoggedAboveDebug() async throws {
        let box = MemoryLogHandlerBox()
        var logger = Logger(label: "test") { _ in MemoryLogHandler(box: box) }
        logger.logLevel = .info
        let client = APIClient(configuration: ClientConfiguration(baseURL: "https://api.test", logger: logger), transport: MockTransport { .text("ok", for: $0) })
        _ = try await client.send(Send(path: "a"))
        #expect(box.lines.withLock { $0.isEmpty })
    }
}
