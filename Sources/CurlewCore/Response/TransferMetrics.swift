/// What libcurl measured about one exchange: phase timings from the start of the transfer,
/// bytes moved, whether a kept-alive connection was reused, the HTTP version and redirects.
public struct TransferMetrics: Sendable, Hashable {
    /// Name resolution finished (`CURLINFO_NAMELOOKUP_TIME_T`).
    public var nameLookup: Duration
    /// The TCP connection was established (`CURLINFO_CONNECT_TIME_T`).
    public var connect: Duration
    /// The TLS handshake finished (`CURLINFO_APPCONNECT_TIME_T`; zero without TLS).
    public var tlsHandshake: Duration
    /// The request was about to be sent: connection (and TLS) ready (`CURLINFO_PRETRANSFER_TIME_T`).
    public var pretransfer: Duration = .zero
    /// The first response byte arrived (`CURLINFO_STARTTRANSFER_TIME_T`).
    public var firstByte: Duration
    /// The whole exchange (`CURLINFO_TOTAL_TIME_T`).
    public var total: Duration
    /// Request bytes sent: headers and body (`CURLINFO_REQUEST_SIZE` + `CURLINFO_SIZE_UPLOAD_T`).
    public var bytesSent: Int64
    /// Response bytes received: headers and body (`CURLINFO_HEADER_SIZE` + `CURLINFO_SIZE_DOWNLOAD_T`).
    public var bytesReceived: Int64
    /// Whether the exchange ran on a connection kept alive from an earlier one.
    public var reusedConnection: Bool
    /// The HTTP version of the final response, e.g. `"1.1"` or `"2"`.
    public var httpVersion: String
    /// How many redirects were followed.
    public var redirectCount: Int
    /// The IP address of the peer the last connection went to (`CURLINFO_PRIMARY_IP`), if known.
    public var remoteAddress: String?
    /// The port of that peer (`CURLINFO_PRIMARY_PORT`), zero if unknown.
    public var remotePort: Int = 0
    /// How many connection attempts the exchange made, the first included: more than 1 when
    /// `CurlTransport` retried connection establishment that failed before anything was sent
    /// (``ConnectRetryPolicy``).
    public var connectionAttempts: Int = 1

    /// Creates metrics (transports other than `CurlTransport` may fill what they know).
    public init(
        nameLookup: Duration = .zero, connect: Duration = .zero, tlsHandshake: Duration = .zero,
        firstByte: Duration = .zero, total: Duration = .zero, bytesSent: Int64 = 0, bytesReceived: Int64 = 0,
        reusedConnection: Bool = false, httpVersion: String = "1.1", redirectCount: Int = 0,
        pretransfer: Duration = .zero, remoteAddress: String? = nil, remotePort: Int = 0
    ) {
        self.pretransfer = pretransfer
        self.remoteAddress = remoteAddress
        self.remotePort = remotePort
        self.nameLookup = nameLookup
        self.connect = connect
        self.tlsHandshake = tlsHandshake
        self.firstByte = firstByte
        self.total = total
        self.bytesSent = bytesSent
        self.bytesReceived = bytesReceived
        self.reusedConnection = reusedConnection
        self.httpVersion = httpVersion
        self.redirectCount = redirectCount
    }
}
