public import Foundation
internal import Synchronization

/// Tracks the offset between this machine's clock and the server's, from each response's `Date`
/// header (or a configured envelope field with Unix seconds), and can add a corrected timestamp
/// parameter to every request. ``Client/serverTime()`` reads it.
///
/// ```swift
/// let clock = ServerClock(timestampParameter: "ts")
/// let client = Client(configuration: ClientConfiguration(baseURL: base, middleware: [clock]))
/// let serverNow = client.serverTime()
/// ```
public final class ServerClock: Middleware {
    /// The offset (server − local) in seconds, guarded by the mutex; `nil` until a response came.
    private let offset = Mutex<TimeInterval?>(nil)
    /// When set, a corrected Unix timestamp is added as this query parameter.
    public let timestampParameter: String?
    /// When set, the server time is read from this key path of the JSON body (Unix seconds)
    /// instead of the `Date` header.
    public let envelopeTimePath: String?

    /// Creates a clock.
    public init(timestampParameter: String? = nil, envelopeTimePath: String? = nil) {
        self.timestampParameter = timestampParameter
        self.envelopeTimePath = envelopeTimePath
    }

    /// `.serverClock`.
    public var kind: MiddlewareKind { .serverClock }

    /// The server's current time as best known (the local time until a response was seen).
    public func now() -> Date {
        Date().addingTimeInterval(currentOffset ?? 0)
    }

    /// Server minus local time in seconds, `nil` before any response.
    public var currentOffset: TimeInterval? { offset.withLock { $0 } }

    /// Adds the timestamp, sends, and learns the offset from the response.
    public func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> MiddlewareResponse {
        var request = request
        if let timestampParameter {
            request.setURL(QueryString.appending([URLQueryItem(name: timestampParameter, value: String(Int(now().timeIntervalSince1970)))], to: request.url))
        }
        do {
            let response = try await next(request, context)
            learn(from: response.raw.headers[.date], body: response.raw)
            return response
        } catch let error as CurlewError {
            learn(from: error.headers?[.date], body: nil)
            throw error
        }
    }

    private func learn(from dateHeader: String?, body: RawResponse?) {
        var serverTime: Date?
        if let envelopeTimePath, let body, let value = try? body.json(at: envelopeTimePath), let seconds = value.doubleValue {
            serverTime = Date(timeIntervalSince1970: seconds)
        } else if let dateHeader {
            serverTime = Self.parseHTTPDate(dateHeader)
        }
        guard let serverTime else { return }
        offset.withLock { $0 = serverTime.timeIntervalSinceNow }
    }

    /// Parses an IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`).
    static func parseHTTPDate(_ text: String) -> Date? {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: text)
    }
}
