/// Whether and how requests go through a proxy.
///
/// libcurl on its own reads the `http_proxy`, `https_proxy`, `all_proxy` and `no_proxy`
/// environment variables silently. Curlew does not: a server's outbound traffic should not change
/// because a deployment happens to export a variable. The default, ``direct``, ignores them;
/// ``environment`` opts in to libcurl's reading of them; ``http(host:port:username:password:excluding:)``
/// and ``socks5(host:port:username:password:excluding:)`` name a proxy explicitly.
///
/// Its descriptions never show the password.
public struct ProxyConfiguration: Sendable, Hashable, CustomStringConvertible, CustomReflectable {
    package enum Kind: Sendable, Hashable {
        case http
        case socks5
    }

    package struct Server: Sendable, Hashable {
        package var kind: Kind
        package var host: String
        package var port: Int
        package var username: String?
        package var password: String?
        package var excludedHosts: [String]
    }

    package enum Mode: Sendable, Hashable {
        case direct
        case environment
        case server(Server)
    }

    package let mode: Mode

    /// No proxy, whatever the environment says (the default).
    public static let direct = ProxyConfiguration(mode: .direct)

    /// The proxy the environment names, read by libcurl when the transfer starts: `http_proxy`
    /// for http URLs, `https_proxy` or `HTTPS_PROXY` for https, `all_proxy` otherwise, except the
    /// hosts in `no_proxy`. (libcurl ignores upper-case `HTTP_PROXY`, which a CGI request could set.)
    public static let environment = ProxyConfiguration(mode: .environment)

    /// An HTTP proxy: https URLs go through a `CONNECT` tunnel (the proxy sees only the host and
    /// port), http URLs are forwarded by the proxy.
    /// - Parameters:
    ///   - host: The proxy's host name or IP address.
    ///   - port: The proxy's port.
    ///   - username: For basic authentication to the proxy (`Proxy-Authorization`).
    ///   - password: The password for `username`.
    ///   - excluding: Hosts reached directly (`CURLOPT_NOPROXY`): a name matches itself and its
    ///     subdomains, `*` matches every host.
    public static func http(host: String, port: Int, username: String? = nil, password: String? = nil, excluding: [String] = []) -> ProxyConfiguration {
        ProxyConfiguration(mode: .server(Server(kind: .http, host: host, port: port, username: username, password: password, excludedHosts: excluding)))
    }

    /// A SOCKS5 proxy that also resolves host names (`socks5h`), with optional username and
    /// password authentication (RFC 1929).
    /// - Parameters:
    ///   - host: The proxy's host name or IP address.
    ///   - port: The proxy's port.
    ///   - username: For username/password authentication.
    ///   - password: The password for `username`.
    ///   - excluding: Hosts reached directly (`CURLOPT_NOPROXY`).
    public static func socks5(host: String, port: Int, username: String? = nil, password: String? = nil, excluding: [String] = []) -> ProxyConfiguration {
        ProxyConfiguration(mode: .server(Server(kind: .socks5, host: host, port: port, username: username, password: password, excludedHosts: excluding)))
    }

    /// The mode and the proxy's address, never its password.
    public var description: String {
        switch mode {
        case .direct: "direct"
        case .environment: "environment"
        case .server(let server):
            "\(server.kind == .http ? "http" : "socks5h")://\(server.username.map { "\($0):***@" } ?? "")\(server.host):\(server.port)"
        }
    }

    /// The same as ``description``, so `dump()` shows no password either.
    public var customMirror: Mirror { Mirror(self, children: ["proxy": description]) }
}
