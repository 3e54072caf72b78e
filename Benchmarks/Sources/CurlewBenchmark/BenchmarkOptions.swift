import Foundation

/// Command-line options of the benchmark, with their defaults.
///
/// ```
/// CurlewBenchmark --url http://127.0.0.1:18089/small.json \
///                 --status-url http://127.0.0.1:18089/nginx_status \
///                 --expected-bytes 225 [--requests 5000] [--warmup 200] \
///                 [--concurrency 1,16,64] [--rounds 1] \
///                 [--clients curlew-data,curlew-decoded,curlew-queue,curlew-middleware,
///                            async-http-client,urlsession,libcurl]  (default)
///                 [--static-url http://127.0.0.1:18089/static/small.json]
///                 [--ca-file ca.pem] [--http-version 1.1|2] [--engines N]
/// ```
///
/// `--ca-file` and `--http-version` apply to the HTTPS rows (`curlew-data`, `async-http-client`,
/// `libcurl` against an https URL): the CA the clients trust, and HTTP/1.1 only or HTTP/2 by ALPN.
///
/// `--engines` sets the engine count of every Curlew client's `CurlTransport`; without it the
/// transport's default applies (one engine per active processor).
///
/// Opt-in clients (only when named in `--clients`): `curlew-cache-memory`, `curlew-cache-disk`,
/// `curlew-revalidate`.
struct BenchmarkOptions: Sendable {
    /// The URL every measured request fetches.
    var url: String = "http://127.0.0.1:18089/small.json"
    /// The same document served as a static file (nginx sends `ETag` and `Last-Modified` for it),
    /// for `curlew-revalidate`. Default: `/static/small.json` on the host and port of ``url``.
    var staticURL: String = ""
    /// nginx's `stub_status` page, read before and after each run for the `accepts` counter.
    var statusURL: String = "http://127.0.0.1:18089/nginx_status"
    /// The exact body length a correct response has; `nil` accepts any length.
    var expectedBytes: Int?
    /// Measured requests per client and concurrency level.
    var requests: Int = 5000
    /// Requests sent before measuring (their connections still count).
    var warmup: Int = 200
    /// Concurrency levels, each run with a fresh client.
    var concurrencyLevels: [Int] = [1, 16, 64]
    /// Which clients to run, in this order.
    var clients: [ClientKind] = ClientKind.defaultClients
    /// How often the whole matrix runs; each row reports the median of its rounds.
    var rounds: Int = 1
    /// A PEM file of the CA that signed nginx's certificate (https URLs).
    var caFile: String?
    /// Whether `curlew-data`, `async-http-client` and `libcurl` may use HTTP/2 (negotiated by
    /// ALPN over TLS); `false` forces HTTP/1.1.
    var http2 = false
    /// `CurlTransport.Configuration.engineCount` of the Curlew clients; `nil` for the default.
    var engines: Int?

    static let usage = """
        usage: CurlewBenchmark [--url URL] [--status-url URL] [--expected-bytes N] [--requests N]
                               [--warmup N] [--concurrency 1,16,64] [--rounds N] [--static-url URL]
                               [--ca-file PEM] [--http-version 1.1|2] [--engines N]
                               [--clients \(ClientKind.allCases.map(\.rawValue).joined(separator: ","))]
        """

    /// Parses `arguments` (without the program name).
    /// - Throws: ``BenchmarkOptions/ParseError`` with a message for the user.
    init(arguments: [String]) throws(ParseError) {
        var remaining = arguments[...]
        func value(for flag: String) throws(ParseError) -> String {
            guard let next = remaining.popFirst() else { throw ParseError("\(flag) needs a value") }
            return next
        }
        func positive(_ text: String, _ flag: String) throws(ParseError) -> Int {
            guard let number = Int(text), number > 0 else { throw ParseError("\(flag) expects a positive integer, got \"\(text)\"") }
            return number
        }
        while let flag = remaining.popFirst() {
            switch flag {
            case "--url": url = try value(for: flag)
            case "--static-url": staticURL = try value(for: flag)
            case "--status-url": statusURL = try value(for: flag)
            case "--expected-bytes": expectedBytes = try positive(value(for: flag), flag)
            case "--requests", "-n": requests = try positive(value(for: flag), flag)
            case "--rounds": rounds = try positive(value(for: flag), flag)
            case "--ca-file": caFile = try value(for: flag)
            case "--engines": engines = try positive(value(for: flag), flag)
            case "--http-version":
                switch try value(for: flag) {
                case "1.1": http2 = false
                case "2": http2 = true
                case let other: throw ParseError("--http-version expects 1.1 or 2, got \"\(other)\"")
                }
            case "--warmup":
                let text = try value(for: flag)
                guard let number = Int(text), number >= 0 else { throw ParseError("--warmup expects a non-negative integer") }
                warmup = number
            case "--concurrency", "-c":
                var levels: [Int] = []
                for part in try value(for: flag).split(separator: ",") { levels.append(try positive(String(part), flag)) }
                guard !levels.isEmpty else { throw ParseError("--concurrency needs at least one level") }
                concurrencyLevels = levels
            case "--clients":
                var kinds: [ClientKind] = []
                for part in try value(for: flag).split(separator: ",") {
                    guard let kind = ClientKind(rawValue: String(part)) else { throw ParseError("unknown client \"\(part)\"") }
                    kinds.append(kind)
                }
                guard !kinds.isEmpty else { throw ParseError("--clients needs at least one client") }
                clients = kinds
            case "--help", "-h": throw ParseError(nil)
            default: throw ParseError("unknown argument \"\(flag)\"")
            }
        }
        guard URL(string: url)?.host != nil else { throw ParseError("--url is not an absolute URL: \(url)") }
        if staticURL.isEmpty, var components = URLComponents(string: url) {
            components.path = "/static/small.json"
            components.query = nil
            staticURL = components.string ?? staticURL
        }
        guard URL(string: staticURL)?.host != nil else { throw ParseError("--static-url is not an absolute URL: \(staticURL)") }
        guard URL(string: statusURL)?.host != nil else { throw ParseError("--status-url is not an absolute URL: \(statusURL)") }
    }

    /// A bad command line; `message` is `nil` when only the usage was asked for.
    struct ParseError: Error {
        let message: String?
        init(_ message: String?) { self.message = message }
    }
}
