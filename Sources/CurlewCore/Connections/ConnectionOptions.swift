/// How requests reach their servers: which certificates to trust and present, which public keys
/// to pin, a proxy, a cookie jar, host overrides and speed limits.
///
/// Part of ``TransferOptions``, so a client sets it once in
/// `ClientConfiguration.transferOptions` and an endpoint may adjust its copy in
/// `Endpoint.willSend(_:)`; speed limits and host overrides can also be set for one call
/// (`RequestOptions.maximumReceiveSpeed`, `RequestOptions.hostOverrides`):
///
/// ```swift
/// var options = TransferOptions()
/// options.connection.tls.trustRoots = .pem(companyRootPEM)
/// options.connection.proxy = .http(host: "proxy.internal", port: 3128, excluding: ["localhost"])
/// options.connection.cookies = CookieJar()
/// let client = APIClient(configuration: ClientConfiguration(baseURL: "https://api.example.com", transferOptions: options))
/// ```
///
/// Connections are pooled per transport; libcurl reuses a pooled connection only for a request
/// with the same TLS settings (trust roots, verification, client certificate, pins) and the same
/// proxy, so a request with other settings never rides on a connection it would not have made.
public struct ConnectionOptions: Sendable, Hashable {
    /// Certificate verification, trust roots, a client certificate and public-key pins.
    public var tls = TLSOptions()
    /// The proxy, or none. The default, ``ProxyConfiguration/direct``, ignores the `http_proxy`,
    /// `https_proxy`, `all_proxy` and `no_proxy` environment variables; opt in with
    /// ``ProxyConfiguration/environment``.
    public var proxy: ProxyConfiguration = .direct
    /// The cookie jar requests read and fill; `nil` (the default) sends and keeps no cookies.
    public var cookies: CookieJar?
    /// Host names answered by a fixed address instead of DNS (tests, a canary, split horizon).
    /// TLS still verifies the URL's host name, and the `Host` header and cookies still use it.
    public var hostOverrides: [HostOverride] = []
    /// The average download speed this exchange may not exceed, in bytes per second; `nil` for
    /// no limit (`CURLOPT_MAX_RECV_SPEED_LARGE`).
    public var maximumReceiveSpeed: Int?
    /// The average upload speed this exchange may not exceed, in bytes per second; `nil` for no
    /// limit (`CURLOPT_MAX_SEND_SPEED_LARGE`).
    public var maximumSendSpeed: Int?

    /// Creates options: verified TLS with the system's trust roots, no proxy (environment
    /// variables ignored), no cookies, no overrides, no speed limits.
    public init() {}

    /// Whether a transfer points its handle at objects of its own (a cookie jar, a host override
    /// list) that it attaches and detaches (`CurlConnectionOptions.attach`).
    package var needsAttachment: Bool { cookies != nil || !hostOverrides.isEmpty }
}
