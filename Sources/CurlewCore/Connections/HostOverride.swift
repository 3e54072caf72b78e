/// A host name (and optionally one port) answered by a fixed address instead of DNS.
///
/// Applied with `CURLOPT_CONNECT_TO` rather than `CURLOPT_RESOLVE`: `CURLOPT_RESOLVE` writes into
/// the DNS cache of the whole transport, so one request's override would leak into every other
/// client sharing it; `CURLOPT_CONNECT_TO` applies to the one exchange. The URL keeps its host
/// name, so TLS verifies it, `Host` carries it and cookies are scoped by it.
public struct HostOverride: Sendable, Hashable, CustomStringConvertible {
    /// The host name in request URLs.
    public let host: String
    /// The port it applies to; `nil` for every port.
    public let port: Int?
    /// The IPv4 or IPv6 address (or another host name) to connect to instead.
    public let address: String

    /// An override; `nil` when a part is empty, contains characters that cannot appear in a host
    /// name or address, or the port is outside 1…65535.
    public init?(host: String, port: Int? = nil, address: String) {
        guard Self.isHostLike(host), !host.contains(":"), Self.isHostLike(address) else { return nil }
        if let port, !(1...65_535).contains(port) { return nil }
        self.host = host
        self.port = port
        self.address = address
    }

    /// `host[:port] → address`.
    public var description: String { "\(host)\(port.map { ":\($0)" } ?? "") → \(address)" }

    /// The `CURLOPT_CONNECT_TO` line: `host:port:address:` (an empty port matches every port and
    /// keeps the URL's port); an IPv6 address goes in brackets.
    package var connectToLine: String {
        let target = address.contains(":") && !address.hasPrefix("[") ? "[\(address)]" : address
        return "\(host):\(port.map(String.init) ?? ""):\(target):"
    }

    /// Letters, digits, `.`, `-`, `_`, and for IPv6 `:`, `[`, `]`; nothing empty.
    package static func isHostLike(_ text: String) -> Bool {
        !text.isEmpty && text.utf8.count <= 253
            && text.utf8.allSatisfy { byte in
                switch byte {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                    UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "."), UInt8(ascii: "-"), UInt8(ascii: "_"),
                    UInt8(ascii: ":"), UInt8(ascii: "["), UInt8(ascii: "]"):
                    true
                default:
                    false
                }
            }
    }
}
