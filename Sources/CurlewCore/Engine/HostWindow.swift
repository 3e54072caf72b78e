/// The engines allowed to carry transfers to one host: `count` consecutive engines (wrapping
/// around) starting at `start`.
///
/// Used only when a per-host connection cap is smaller than the engine count (see
/// ``EngineLayout``): every engine then allows one connection per host, and a host's transfers
/// stay inside its window, so the host never has more connections than the cap. Otherwise the
/// window is every engine.
///
/// The window follows the URL's host name, not its port or a proxy: libcurl counts the per-host
/// cap per host and port, so keeping all ports of a host name in one window is only stricter.
package struct HostWindow: Sendable, Equatable {
    /// The first engine of the window.
    package let start: Int
    /// How many engines the window holds (at least 1).
    package let count: Int

    /// The window of every engine.
    package static func all(_ engines: Int) -> HostWindow {
        HostWindow(start: 0, count: engines)
    }

    /// The window of `size` engines out of `engines` for the host of `url`: the host name's
    /// hash picks the first, so one host always lands in the same window.
    package static func forHost(of url: String, size: Int, engines: Int) -> HostWindow {
        guard size < engines else { return all(engines) }
        let hash = hostHash(url)
        return HostWindow(start: Int(hash % UInt64(engines)), count: size)
    }

    /// Whether engine `index` lies in the window.
    package func contains(_ index: Int, engines: Int) -> Bool {
        let offset = index >= start ? index - start : index + engines - start
        return offset < count
    }

    /// FNV-1a over the URL's host name, lower-cased (an absolute http(s) URL, validated when the
    /// request was prepared): after `://`, without user information, up to the port or the end
    /// of the authority; an IPv6 literal up to its `]`. Stable within and across processes.
    package static func hostHash(_ url: String) -> UInt64 {
        var utf8 = url.utf8[...]
        if let colon = utf8.firstIndex(of: UInt8(ascii: ":")) {
            utf8 = utf8[utf8.index(after: colon)...].drop { $0 == UInt8(ascii: "/") }
        }
        let authority = utf8.prefix { $0 != UInt8(ascii: "/") && $0 != UInt8(ascii: "?") && $0 != UInt8(ascii: "#") }
        var host = authority
        if let at = authority.lastIndex(of: UInt8(ascii: "@")) { host = authority[authority.index(after: at)...] }
        if host.first == UInt8(ascii: "[") {
            if let close = host.firstIndex(of: UInt8(ascii: "]")) { host = host[...close] }
        } else if let colon = host.firstIndex(of: UInt8(ascii: ":")) {
            host = host[..<colon]
        }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in host {
            let lowered = byte >= UInt8(ascii: "A") && byte <= UInt8(ascii: "Z") ? byte + 32 : byte
            hash = (hash ^ UInt64(lowered)) &* 0x0000_0100_0000_01b3
        }
        return hash
    }
}
