import AsyncHTTPClient
import Curlew
import Foundation
import Hummingbird
import Logging
import NIOCore
import NIOPosix

/// The FanOutService's handler on two clients, for measuring them side by side
/// (`scripts/service-table.sh`): `FanOutBench curlew|ahc <port> <upstream base URL> [cap]`.
///
/// `GET /portfolio` asks the upstream for three quotes at once (`GET /quote/{symbol}`), decodes
/// them and answers their sum, as the sample does, but without its per-request log lines, so the
/// measurement is the client's work. `cap`: the client's connections per host (none by default);
/// AsyncHTTPClient is otherwise set up as a service would: its shared event loops, HTTP/1.1.
@main
struct FanOutBench {
    static func main() async throws {
        let arguments = Array(CommandLine.arguments.dropFirst())
        guard arguments.count >= 3, let port = Int(arguments[1]) else {
            print("usage: FanOutBench curlew|ahc <port> <upstream base URL> [connections per host]")
            return
        }
        let upstream = arguments[2]
        let cap = arguments.count > 3 ? Int(arguments[3]) : nil
        var logger = Logger(label: "fanout-bench")
        logger.logLevel = .error
        let fetch: @Sendable (String) async throws -> Quote
        var shutdown: @Sendable () async throws -> Void = {}
        switch arguments[0] {
        case "curlew":
            // FANOUT_ENGINES: Curlew's engine count (default: one per processor).
            let engines = ProcessInfo.processInfo.environment["FANOUT_ENGINES"].flatMap(Int.init)
            let transport = CurlTransport(configuration: .init(maximumConnectionsPerHost: cap, engineCount: engines))
            let client = APIClient(baseURL: upstream, transport: transport)
            fetch = { symbol in try await client.send(QuoteRequest(symbol: symbol)) }
            shutdown = { await transport.shutdown() }
        case "ahc":
            var configuration = HTTPClient.Configuration()
            configuration.httpVersion = .http1Only
            configuration.connectionPool = .init(
                idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: cap ?? 1024)
            let client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
            let decoder = JSONDecoder()
            fetch = { symbol in
                let response = try await client.execute(HTTPClientRequest(url: "\(upstream)/quote/\(symbol)"), timeout: .seconds(30))
                guard response.status == .ok else { throw HTTPError(.badGateway) }
                let body = try await response.body.collect(upTo: 1 << 20)
                return try decoder.decode(Quote.self, from: Data(body.readableBytesView))
            }
            shutdown = { try await client.shutdown() }
        default:
            print("unknown client \(arguments[0]): curlew or ahc")
            return
        }
        let router = Router()
        router.get("portfolio") { _, _ -> PortfolioValue in
            let quotes = try await withThrowingTaskGroup(of: Quote.self) { group in
                for symbol in ["ACME", "GLOBEX", "INITECH"] { group.addTask { try await fetch(symbol) } }
                return try await group.reduce(into: []) { $0.append($1) }.sorted { $0.symbol < $1.symbol }
            }
            return PortfolioValue(quotes: quotes, total: quotes.reduce(0) { $0 + $1.price })
        }
        let app = Application(router: router, configuration: .init(address: .hostname("127.0.0.1", port: port)), logger: logger)
        try await app.runService()
        try await shutdown()
    }
}

/// One upstream quote.
struct QuoteRequest: Endpoint {
    typealias Response = Quote
    var symbol: String
    var path: String { "quote/\(symbol)" }
}

struct Quote: Codable, Sendable {
    var symbol: String
    var price: Int
}

struct PortfolioValue: ResponseCodable {
    var quotes: [Quote]
    var total: Int
}
