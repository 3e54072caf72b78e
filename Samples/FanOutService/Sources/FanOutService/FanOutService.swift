import Curlew
import Foundation
import Hummingbird
import Logging
import ServiceLifecycle
import Synchronization

/// `FanOutService upstream <port>`: a slow upstream (`GET /quote/{symbol}?delay=<ms>`).
/// `FanOutService serve <port> <upstream base URL>`: the service (`GET /portfolio?delay=<ms>`),
/// which asks the upstream for three quotes at once through Curlew and answers their sum. With
/// `&budget=<ms>` the handler's budget reaches its upstream calls as a deadline (`withDeadline`):
/// they are cut off when it is spent, and the service answers `504`.
/// `FanOutService serve <port> <upstream base URL> --fleet <postgres URL>` (or `CURLEW_FLEET_URL`
/// in the environment; `--soft-timeout <ms>` for the store's reads and locks): one instance of a fleet sharing a second cache tier, invalidations and a
/// queue limit through that PostgreSQL (FleetMode.swift; `bash scripts/fleet-two-instances.sh`
/// runs two instances on one private database).
@main
struct FanOutService {
    static func main() async throws {
        let arguments = CommandLine.arguments.dropFirst()
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardOutput(label: label)
            handler.logLevel = .debug
            return handler
        }
        var logger = Logger(label: "fanout")
        logger.logLevel = .debug
        switch (arguments.first, arguments.dropFirst().first.flatMap(Int.init)) {
        case ("upstream", let port?):
            try await Upstream.application(port: port, logger: logger).runService()
        case ("serve", let port?):
            guard let upstream = arguments.dropFirst(2).first else { fallthrough }
            let options = Array(arguments.dropFirst(3))
            let fleetURL =
                options.firstIndex(of: "--fleet").flatMap { options.dropFirst($0 + 1).first }
                ?? ProcessInfo.processInfo.environment["CURLEW_FLEET_URL"]
            let softTimeout = options.firstIndex(of: "--soft-timeout").flatMap { options.dropFirst($0 + 1).first }.flatMap { Int($0) }
            if let fleetURL {
                try await FleetMode.serve(port: port, upstream: upstream, databaseURL: fleetURL, softTimeout: softTimeout, logger: logger)
            } else {
                try await serve(port: port, upstream: upstream, logger: logger)
            }
        default:
            print("usage: FanOutService upstream <port> | serve <port> <upstream base URL> [--fleet <postgres URL> [--soft-timeout <ms>]]")
        }
    }

    /// The service and the transport it owns, in one ServiceGroup that drains on SIGTERM.
    static func serve(port: Int, upstream: String, logger: Logger) async throws {
        // The service's own transport (its own engine thread), drained on shutdown. The drain
        // begins with the signal itself: from then on every upstream call has the rest of the
        // 10 s as its deadline, so a hung upstream cannot keep the process alive past it.
        let transport = TransportService(gracePeriod: .seconds(10), drainSignals: [.sigterm, .sigint])
        let client = APIClient(baseURL: upstream, transport: transport)
        let app = Application(
            router: Portfolio.router(client: client),
            configuration: .init(address: .hostname("127.0.0.1", port: port)),
            logger: logger)
        // Reverse order on shutdown: the HTTP server stops accepting and finishes its requests
        // (and their upstream calls) first, then the transport drains and stops.
        let group = ServiceGroup(
            configuration: .init(
                services: [.init(service: transport), .init(service: app)],
                gracefulShutdownSignals: [.sigterm, .sigint],
                logger: logger))
        try await group.run()
        logger.info("stopped", metadata: ["upstream.in_flight": "\(transport.inFlight)"])
    }
}

/// One upstream quote.
struct QuoteRequest: Endpoint {
    typealias Response = Quote
    var symbol: String
    var delay: Int
    var path: String { "quote/\(symbol)" }
    var query: [URLQueryItem] { [URLQueryItem(name: "delay", value: "\(delay)")] }
}

/// The upstream's answer.
struct Quote: Codable, Sendable {
    var symbol: String
    var price: Int
}

/// The service's answer.
struct PortfolioValue: ResponseCodable {
    var quotes: [Quote]
    var total: Int
}

enum Portfolio {
    static func router(client: APIClient) -> Router<BasicRequestContext> {
        let router = Router()
        router.get("portfolio") { request, context -> PortfolioValue in
            let delay = request.uri.queryParameters.get("delay", as: Int.self) ?? 0
            // The caller's budget for this request, if it gave one (a gateway's own deadline).
            let budget = request.uri.queryParameters.get("budget", as: Int.self).map { Duration.milliseconds($0) } ?? .seconds(3600)
            context.logger.info("fanning out", metadata: ["delay_ms": "\(delay)"])
            do {
                // Every call inside obeys the deadline, in the group's child tasks too; Curlew's
                // log lines for these calls carry this request's `hb.request.id`.
                let quotes = try await withDeadline(in: budget) {
                    try await withThrowingTaskGroup(of: Quote.self) { group in
                        for symbol in ["ACME", "GLOBEX", "INITECH"] {
                            group.addTask {
                                try await client.send(QuoteRequest(symbol: symbol, delay: delay)) { $0.logger = context.logger }
                            }
                        }
                        return try await group.reduce(into: []) { $0.append($1) }.sorted { $0.symbol < $1.symbol }
                    }
                }
                context.logger.info("answered", metadata: ["quotes": "\(quotes.count)"])
                return PortfolioValue(quotes: quotes, total: quotes.reduce(0) { $0 + $1.price })
            } catch let error as CurlewError {
                // One line: 502 upstream failure, 504 upstream timeout, 503 shutting down.
                context.logger.warning("upstream failed: \(error)")
                throw HTTPError(error.serverResponseStatus, message: error.serverResponseMessage)
            }
        }
        return router
    }
}

enum Upstream {
    static func application(port: Int, logger: Logger) -> some ApplicationProtocol {
        let router = Router()
        let counts = UpstreamCounts()
        router.get("quote/:symbol") { request, context -> Response in
            let symbol = context.parameters.get("symbol") ?? "?"
            let delay = request.uri.queryParameters.get("delay", as: Int.self) ?? 0
            counts.begin(symbol)
            defer { counts.end() }
            try await Task.sleep(for: .milliseconds(delay))
            let price = symbol.unicodeScalars.reduce(0) { $0 + Int($1.value) }
            let body = #"{"symbol":"\#(symbol)","price":\#(price)}"#
            return Response(
                status: .ok, headers: [.contentType: "application/json"],
                body: .init(byteBuffer: ByteBuffer(string: body)))
        }
        // What the upstream has seen: requests per symbol and the most quote requests it served at
        // once (`scripts/fleet-two-instances.sh` reads them; `?reset=1` starts the peak again).
        router.get("stats") { request, _ -> UpstreamCounts.Snapshot in
            counts.snapshot(resettingPeak: request.uri.queryParameters.get("reset") == "1")
        }
        return Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: logger)
    }
}

/// Requests per symbol and the peak concurrency of the upstream's quote route. `Sendable` through
/// the `Mutex` guarding its ``Snapshot``.
final class UpstreamCounts: Sendable {
    struct Snapshot: ResponseCodable {
        var requests: [String: Int]
        var inFlight: Int
        var peak: Int
    }

    private let counts = Mutex(Snapshot(requests: [:], inFlight: 0, peak: 0))

    func begin(_ symbol: String) {
        counts.withLock { counts in
            counts.requests[symbol, default: 0] += 1
            counts.inFlight += 1
            counts.peak = max(counts.peak, counts.inFlight)
        }
    }

    func end() {
        counts.withLock { $0.inFlight -= 1 }
    }

    func snapshot(resettingPeak: Bool) -> Snapshot {
        counts.withLock { counts in
            defer { if resettingPeak { counts.peak = counts.inFlight } }
            return counts
        }
    }
}
