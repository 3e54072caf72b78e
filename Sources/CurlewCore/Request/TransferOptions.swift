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
    /// Longest wait for the response head, `nil` (the default) for none: the time from the last
    /// byte of the request sent (the start, for a request without a body) to the first byte of
    /// the response. Checked with the idle timeout, ten times a second. Fails with
    /// `.headTimeout`. The four timeouts are distinct: connect (``connectTimeout``), head (this),
    /// stall (``idleTimeout``), the whole exchange (``totalTimeout``).
    public var headTimeout: Duration?
    /// Most connection attempts for this exchange, the first included, `nil` (the default) for
    /// the transport's own policy (``ConnectRetryPolicy/maximumAttempts``); 1 turns the
    /// transport's connect retries off for it. `FailoverMiddleware` sets 1 while another origin
    /// is left to try: trying that origin is its retry. A value below 1 is refused: the call
    /// fails unsent with ``CurlewError/Code/invalidConnectionSettings``.
    public var maximumConnectAttempts: Int?
    /// Largest accepted response body, counted in decoded bytes. Fails with `.bodyTooLarge`. A
    /// negative size is refused: the call fails unsent with
    /// ``CurlewError/Code/invalidConnectionSettings``.
    public var maximumBodySize: Int = 16 * 1024 * 1024
    /// How many redirects an `APIClient` call follows; `0` returns 3xx responses as they are.
    /// The client's redirect step follows them (a transport never does), by RFC 9110's rules for every method (`307`/`308` keep method and body, `303`
    /// becomes `GET`, `301`/`302` turn only `POST` into `GET`). `Authorization` and `Cookie` are
    /// never sent to another origin (scheme, host or port); `https` → `http` is refused unless
    /// ``allowsInsecureRedirects``. A negative limit is refused: the call fails unsent with
    /// ``CurlewError/Code/invalidConnectionSettings``.
    public var redirectLimit: Int = 10
    /// HTTP version policy.
    public var httpVersion: HTTPVersion = .automatic
    /// Ask for `gzip`, `deflate`, `br` (brotli) and `zstd`, and decode them. Curlew decodes
    /// itself, so a compressed stream cut short fails with `.protocolError` (truncation) even when
    /// `Content-Length` matched, and a `zstd` frame may not ask for a window over 8 MiB.
    public var acceptsCompressedResponses: Bool = true
    /// A PEM bundle of trusted CA certificates; `nil` uses the system bundle.
    @inlinable public var caBundlePath: String? {
        _read { yield shared.value.caBundlePath }
        _modify { yield &shared.value.caBundlePath }
    }
    /// Headers that, like `Authorization` and `Cookie`, are never sent to another origin (scheme,
    /// host or port) on a redirect — a signature header, an API key.
    @inlinable public var originBoundHeaders: Set<HTTPField.Name> {
        _read { yield shared.value.originBoundHeaders }
        _modify { yield &shared.value.originBoundHeaders }
    }
    /// TLS trust and client certificate, pins, proxy, cookie jar, host overrides and speed limits
    /// (see ``ConnectionOptions``).
    @inlinable public var connection: ConnectionOptions {
        _read { yield shared.value.connection }
        _modify { yield &shared.value.connection }
    }
    /// Follow a redirect from `https` to `http`. Off by default: such a hop fails with
    /// `.insecureRedirect`. When on, the hop loses every credential — `Authorization`,
    /// `Proxy-Authorization`, `Cookie`, the ``originBoundHeaders`` and any user-info in the URL.
    public var allowsInsecureRedirects: Bool = false

    /// The options that hold references, behind one reference of their own: every request
    /// carries a copy of its options, and a pooled easy handle compares the options it carries
    /// with a request's, which for these is one pointer comparison when both come from the same
    /// client configuration. The plain values above copy and compare without reference counting,
    /// so changing one (as the redirect step does on every call) leaves this box shared.
    @usableFromInline var shared = CopyOnWriteBox(Shared())

    @usableFromInline struct Shared: Sendable, Hashable {
        @usableFromInline var caBundlePath: String?
        @usableFromInline var originBoundHeaders: Set<HTTPField.Name> = []
        @usableFromInline var connection = ConnectionOptions()
        @usableFromInline init() {}
    }

    /// Creates options with the defaults documented on each property.
    public init() {}
}
