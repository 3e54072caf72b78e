public import Logging

/// The per-call logger option (``RequestOptions/logger``).
enum LoggerOptionKey: RequestOptionKey {
    static let defaultValue: Logger? = nil
}

extension RequestOptions {
    /// The logger for this call's log lines (and its middleware's, via
    /// ``MiddlewareContext/logger``), like AsyncHTTPClient's `execute(_:logger:)`: pass the
    /// incoming request's logger so Curlew's lines carry its metadata (`hb.request.id`).
    ///
    /// ```swift
    /// let quote = try await client.send(QuoteRequest(symbol: "ACME")) { $0.logger = context.logger }
    /// ```
    ///
    /// When `nil` (the default) the client's ``ClientConfiguration/logger`` is used, with the
    /// metadata of the task-local `Logger.current` (swift-log's `withLogger(…)`) merged in.
    public var logger: Logger? {
        get { self[LoggerOptionKey.self] }
        set { self[LoggerOptionKey.self] = newValue }
    }
}

/// Chooses the logger of one call.
enum CallLogging {
    /// The call's ``RequestOptions/logger``, else the client's logger carrying the task-local
    /// logger's metadata (none outside a `withLogger` scope).
    static func logger(for options: RequestOptions, client: Logger) -> Logger {
        override(for: options, client: client) ?? client
    }

    /// The call's logger when it is not the client's own: the option, or the client's logger
    /// with the task-local logger's metadata merged in; `nil` when the client's logger serves.
    static func override(for options: RequestOptions, client: Logger) -> Logger? {
        if let logger = options.logger { return logger }
        let metadata = Logger.current.handler.metadata
        guard !metadata.isEmpty else { return nil }
        var logger = client
        for (key, value) in metadata where logger[metadataKey: key] == nil {
            logger[metadataKey: key] = value
        }
        return logger
    }
}
