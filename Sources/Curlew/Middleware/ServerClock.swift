public import Foundation
internal import Synchronization

/// Tracks the offset between this machine's clock and the server's, from each response's `Date`
/// header (or a configured envelope field with Unix seconds), and can add a corrected timestamp
/// parameter to every request. ``APIClient/serverTime()`` reads it.
///
/// Only the client's own servers count: requests to its trusted origins (the base URL, the
/// ``FailoverMiddleware`` mirrors, ``ClientConfiguration/trustedOrigins``) get the timestamp and
/// teach the clock. A response from another origin (an absolute URL to a CDN, a redirect's
/// target elsewhere) has its own clock, right or wrong, and is ignored, and its request goes
/// without the timestamp, like common arguments and signatures.
///
/// ```swift
/// let clock = ServerClock(timestampParameter: "ts")
/// let client = APIClient(configuration: ClientConfiguration(baseURL: base, middleware: [clock]))
/// let serverNow = client.serverTime()
/// ```
public final class ServerClock: APIMiddleware {
    /// The offset (server − local) in seconds, `nil` until a response came, and the last `Date`
    /// header with its parsed value (a server sends the same text for a whole second, so most
    /// responses need no parsing); all guarded by the mutex.
    private let state = Mutex<(offset: TimeInterval?, lastHeader: String, lastDate: Date?)>((nil, "", nil))
    /// When set, a corrected Unix timestamp is added as this parameter.
    public let timestampParameter: String?
    /// Where the timestamp goes: the query (default), or, like
    /// ``CommonArgumentsMiddleware/placement``, beside the request's own parameters in a form or
    /// JSON body.
    public let placement: ParameterPlacement
    /// When set, the server time is read from this key path of the JSON body (Unix seconds)
    /// instead of the `Date` header.
    public let envelopeTimePath: String?

    /// Creates a clock.
    public init(timestampParameter: String? = nil, placement: ParameterPlacement = .query, envelopeTimePath: String? = nil) {
        self.timestampParameter = timestampParameter
        self.placement = placement
        self.envelopeTimePath = envelopeTimePath
    }

    /// `.serverClock`.
    public var kind: MiddlewareKind { .serverClock }

    /// ``MiddlewarePhase/serverClock``.
    public var phase: MiddlewarePhase? { .serverClock }
    /// Keeps the server's time for ``APIClient/serverTime()``.
    public var capabilities: MiddlewareCapabilities { MiddlewareCapabilities(serverTime: { self.now() }) }

    /// The server's current time as best known (the local time until a response was seen).
    public func now() -> Date {
        Date().addingTimeInterval(currentOffset ?? 0)
    }

    /// Server minus local time in seconds, `nil` before any response.
    public var currentOffset: TimeInterval? { state.withLock { $0.offset } }

    /// Adds the timestamp, sends, and learns the offset from the response — for a trusted origin
    /// only; a request elsewhere is sent as it is.
    public nonisolated(nonsending) func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        // Runs for each redirect hop (below the redirect step): the URL is this hop's.
        guard context.trusts(request.url) else { return try await next(request, context) }
        var request = request
        if let timestampParameter {
            let stamp = String(Int(now().timeIntervalSince1970))
            if placement == .query {
                request.replaceURL(QueryString.appending([(name: timestampParameter, value: Optional(stamp))], to: request.url))
            } else {
                try ParameterPlacer.place(sorted: [(key: timestampParameter, value: stamp)], in: &request, at: placement, existing: .replace)
            }
        }
        do {
            let response = try await next(request, context)
            learn(from: response.headerFields[.date], body: response)
            return response
        } catch let error as CurlewError {
            learn(from: error.headers?[.date], body: nil)
            throw error
        }
    }

    private func learn(from dateHeader: String?, body: RawResponse?) {
        if let envelopeTimePath, let body, let value = try? body.json(at: envelopeTimePath), let seconds = value.doubleValue,
            (0...Self.latestSeconds).contains(seconds)
        {
            let offset = Date(timeIntervalSince1970: seconds).timeIntervalSinceNow
            state.withLock { $0.offset = offset }
            return
        }
        guard let dateHeader else { return }
        state.withLock { state in
            if dateHeader != state.lastHeader {
                state.lastHeader = dateHeader
                state.lastDate = Self.parseHTTPDate(dateHeader)
            }
            if let date = state.lastDate { state.offset = date.timeIntervalSinceNow }
        }
    }

    /// 9999-12-31T23:59:59Z, the last second an IMF-fixdate can name: a server time past it (or
    /// not a number) is ignored, so the timestamp stays an `Int`.
    static let latestSeconds: TimeInterval = 253_402_300_799

    /// Parses an HTTP date by hand (a `DateFormatter` per response costs more than the whole
    /// request): the IMF-fixdate servers send today (`Sun, 06 Nov 1994 08:49:37 GMT`) and the two
    /// obsolete forms a recipient must still accept (RFC 9110 §5.6.7), RFC 850
    /// (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`).
    static func parseHTTPDate(_ text: String) -> Date? {
        let parts = text.split(separator: " ")
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        let parsed: (day: Int, month: Int, year: Int, time: Substring)
        if parts.count == 6, parts[5] == "GMT", parts[0].hasSuffix(",") {
            // IMF-fixdate: `Sun, 06 Nov 1994 08:49:37 GMT`.
            guard let parsedDay = Int(parts[1]), let parsedYear = Int(parts[3]), let index = months.firstIndex(of: String(parts[2])) else { return nil }
            parsed = (parsedDay, index, parsedYear, parts[4])
        } else if parts.count == 4, parts[3] == "GMT", parts[0].hasSuffix(",") {
            // RFC 850: `Sunday, 06-Nov-94 08:49:37 GMT`; a two-digit year more than 50 years
            // ahead is the last century's (RFC 9110 §5.6.7).
            let date = parts[1].split(separator: "-")
            guard date.count == 3, let parsedDay = Int(date[0]), let short = Int(date[2]), date[2].count == 2,
                let index = months.firstIndex(of: String(date[1]))
            else { return nil }
            let thisYear = 1970 + Int(Date().timeIntervalSince1970 / 31_556_952)
            var full = thisYear / 100 * 100 + short
            if full > thisYear + 50 { full -= 100 }
            parsed = (parsedDay, index, full, parts[2])
        } else if parts.count == 5, !parts[0].hasSuffix(",") {
            // asctime: `Sun Nov  6 08:49:37 1994` (the day padded with a space).
            guard let index = months.firstIndex(of: String(parts[1])), let parsedDay = Int(parts[2]), let parsedYear = Int(parts[4]) else { return nil }
            parsed = (parsedDay, index, parsedYear, parts[3])
        } else {
            return nil
        }
        let (day, month, year, time) = parsed
        guard (0...9999).contains(year) else { return nil }
        let clock = time.split(separator: ":").compactMap { Int($0) }
        guard clock.count == 3, (1...31).contains(day), (0...23).contains(clock[0]), (0...59).contains(clock[1]), (0...60).contains(clock[2]) else {
            return nil
        }
        // Days from 1970-01-01 to the civil date (Howard Hinnant's algorithm).
        let y = month < 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let shiftedMonth = (month + 10) % 12
        let dayOfYear = (153 * shiftedMonth + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        let days = era * 146_097 + dayOfEra - 719_468
        let seconds = days * 86_400 + clock[0] * 3_600 + clock[1] * 60 + clock[2]
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}
