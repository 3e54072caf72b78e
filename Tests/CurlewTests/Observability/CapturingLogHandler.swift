import Logging
import Synchronization

/// Keeps every log record (level, message, merged metadata) for assertions.
final class LogCapture: Sendable {
    struct Record: Sendable {
        var level: Logger.Level
        var message: String
        var metadata: Logger.Metadata
    }

    private let records = Mutex<[Record]>([])

    var all: [Record] { records.withLock { $0 } }

    func append(_ record: Record) { records.withLock { $0.append(record) } }

    /// A logger at `level` writing here.
    func logger(label: String = "capture", level: Logger.Level = .trace) -> Logger {
        var logger = Logger(label: label) { _ in CapturingLogHandler(capture: self) }
        logger.logLevel = level
        return logger
    }
}

struct CapturingLogHandler: LogHandler {
    let capture: LogCapture
    var metadata: Logger.Metadata = [:]
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        var merged = metadata
        for (key, value) in event.metadata ?? [:] { merged[key] = value }
        capture.append(.init(level: event.level, message: "\(event.message)", metadata: merged))
    }
}
