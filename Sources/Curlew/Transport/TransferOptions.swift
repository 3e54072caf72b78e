public import HTTPTypes

/// Per-exchange limits and protocol choices, carried by every ``PreparedRequest``.
public struct TransferOptions: Sendable, Hashable {
    /// Which HTTP versions the transport may use.
    public enum HTTPVersion: Sendable, Hashable {
        /// HTTP/2 over TLS when the server offers it through ALPN, HTTP/1.1 otherwise.
        case automatic
        /// Always HTTP/1.1.
        case http1Only
    }

    /// Longest time to establish a connection (TCP and TLS). Fails with `.connectTimeout`.
    public var connectTimeout: Duration = .seconds(10)
    /// Longest time for the whole exchange, `nil` for none. Fails with `.totalTimeout`.
    public var totalTimeout: Duration? = .seconds(60)
    /// Longest time with no byte received or sent, `nil` for none. The engine checks it ten times
    /// a second, so it fires within about 100 ms after the deadline. Fails with `.idleTimeout`.
    public var idleTimeout: Duration? = .seconds(30)
    /// Largest accepted response body, counted in decoded bytes. Fails with `.bodyTooLarge`.
    public var maximumBodySize: Int = 16 * 1024 * 1024
    /// How many redirects to follow; `0` returns 3xx responses as they are.
    /// `Authorization` and `Cookie` are never sent to another origin (scheme, host or port).
    public var redirectLimit: Int = 10
    /// HTTP version policy.
    public var httpVersion: HTTPVersion = .automatic
    /// Ask for gzip/deflate/brotli and decode transparently.
    public var acceptsCompressedResponses: Bool = true
    /// A PEM bundle of trusted CA certificates; `nil` uses the system bundle.
    public var caBundlePath: String?
    /// Headers that, like `Authorization` and `Cookie`, are never sent to another origin (scheme,
    /// host or port) on a redirect — a signature header, an API key. When any is set, Curlew
    /// follows redirects itself instead of letting libcurl do it.
    public var originBoundHeaders: Set<HTTPField.Name> = []
    /// TLS trust and client certificate, pins, proxy, cookie jar, host overrides and speed limits
    /// (see ``ConnectionOptions``).
    public var connection = ConnectionOptions()

    /// Creates options with the defaults documented on each property.
    public init() {}
}
