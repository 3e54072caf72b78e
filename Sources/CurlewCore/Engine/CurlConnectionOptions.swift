internal import CCurlShim
internal import Foundation

#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    internal import Darwin
#endif

/// Applies a request's ``ConnectionOptions`` (and ``TransferOptions/caBundlePath``) to an easy
/// handle: TLS trust, verification, client certificate and pins, the proxy, the cookie jar,
/// host overrides and speed limits.
///
/// Everything is checked before the first option is set, so bad settings fail with
/// `.invalidConnectionSettings` and nothing is sent. What libcurl does not copy (the
/// `CURLOPT_CONNECT_TO` list, the cookie jar's share handle) lives in the returned
/// ``CurlConnectionAttachment``, which the transfer keeps and detaches before the handle goes
/// back to the pool.
package enum CurlConnectionOptions {
    /// TLS, proxy and speed limits: part of the handle's options block, set after a reset.
    package static func apply(_ options: TransferOptions, setter: CurlOptionSetter) throws(CurlewError) {
        let connection = options.connection
        let request = setter.request
        let proxy = try ProxyLine(connection.proxy, request: request)
        try checkSpeed(connection.maximumReceiveSpeed, "maximumReceiveSpeed", request: request)
        try checkSpeed(connection.maximumSendSpeed, "maximumSendSpeed", request: request)
        try checkFiles(connection.tls, caBundlePath: options.caBundlePath, request: request)

        try applyTLS(connection.tls, caBundlePath: options.caBundlePath, setter)
        if let proxy { try proxy.apply(setter) }
        if let speed = connection.maximumReceiveSpeed { try setter.set(CURLOPT_MAX_RECV_SPEED_LARGE, offset: curl_off_t(speed)) }
        if let speed = connection.maximumSendSpeed { try setter.set(CURLOPT_MAX_SEND_SPEED_LARGE, offset: curl_off_t(speed)) }
    }

    /// The cookie jar and host overrides, which point at objects of this transfer: attached for
    /// it and detached before its handle goes back to the pool.
    package static func attach(_ options: TransferOptions, setter: CurlOptionSetter) throws(CurlewError) -> CurlConnectionAttachment? {
        let connection = options.connection
        let request = setter.request
        guard connection.cookies != nil || !connection.hostOverrides.isEmpty else { return nil }
        let attachment = CurlConnectionAttachment(jar: connection.cookies)
        if let jar = connection.cookies {
            guard let share = jar.share.share else {
                throw CurlewError(code: .transportFailure, message: "libcurl could not create the cookie jar", request: request)
            }
            try setter.set(CURLOPT_SHARE, pointer: share)
            attachment.sharesCookies = true
            // libcurl's cookie engine runs for a handle once a cookie file is named; an empty
            // name turns it on without reading a file (the jar reads and writes its own).
            try setter.set(CURLOPT_COOKIEFILE, "")
            // The request's own cookies join the jar's line (``HeaderLines``).
            if let cookies = HeaderLines.cookieValue(in: setter.prepared.headers) {
                try setter.set(CURLOPT_COOKIE, cookies)
                attachment.setsCookie = true
            }
        }
        if !connection.hostOverrides.isEmpty {
            for override in connection.hostOverrides { attachment.appendConnectTo(override.connectToLine) }
            try setter.set(CURLOPT_CONNECT_TO, list: attachment.connectTo)
        }
        return attachment
    }

    private static func applyTLS(_ tls: TLSOptions, caBundlePath: String?, _ setter: CurlOptionSetter) throws(CurlewError) {
        if !tls.verifiesPeer {
            try setter.set(CURLOPT_SSL_VERIFYPEER, 0)
            try setter.set(CURLOPT_SSL_VERIFYHOST, 0)
        }
        switch tls.trustRoots.source {
        case .system:
            if let caBundlePath { try setter.set(CURLOPT_CAINFO, caBundlePath) }
        case .file(let path):
            try setter.set(CURLOPT_CAINFO, path)
            try setter.set(CURLOPT_CAPATH, nil)
        case .pem(let bytes):
            // CURLOPT_CAINFO_BLOB replaces the CA file; the CA directory is cleared too, so only
            // these roots are trusted.
            try setter.set(CURLOPT_CAINFO_BLOB, blob: bytes)
            try setter.set(CURLOPT_CAPATH, nil)
        }
        if let certificate = tls.clientCertificate {
            switch certificate.material {
            case .files(let certificatePath, let keyPath):
                try setter.set(CURLOPT_SSLCERT, certificatePath)
                try setter.set(CURLOPT_SSLCERTTYPE, "PEM")
                if let keyPath { try setter.set(CURLOPT_SSLKEY, keyPath) }
            case .pem(let certificateBytes, let keyBytes):
                try setter.set(CURLOPT_SSLCERT_BLOB, blob: certificateBytes)
                try setter.set(CURLOPT_SSLCERTTYPE, "PEM")
                try setter.set(CURLOPT_SSLKEY_BLOB, blob: keyBytes ?? certificateBytes)
                try setter.set(CURLOPT_SSLKEYTYPE, "PEM")
            }
            if let password = certificate.password { try setter.set(CURLOPT_KEYPASSWD, password) }
        }
        if !tls.pinnedPublicKeys.isEmpty {
            try setter.set(CURLOPT_PINNEDPUBLICKEY, tls.pinnedPublicKeys.map(\.description).joined(separator: ";"))
        }
    }

    /// The files TLS reads — trust roots, the CA bundle, a client certificate and its key — must
    /// be readable files: libcurl would open them only when a TLS connection starts and fail with
    /// a TLS error that names no file. Checked here, the call fails unsent, naming the setting
    /// and the path.
    private static func checkFiles(_ tls: TLSOptions, caBundlePath: String?, request: RequestSummary) throws(CurlewError) {
        switch tls.trustRoots.source {
        case .file(let path): try checkReadable(path, "TLSOptions.trustRoots", request: request)
        case .system: if let caBundlePath { try checkReadable(caBundlePath, "TransferOptions.caBundlePath", request: request) }
        case .pem: break
        }
        if case .files(let certificate, let key)? = tls.clientCertificate?.material {
            try checkReadable(certificate, "the client certificate", request: request)
            if let key { try checkReadable(key, "the client certificate's private key", request: request) }
        }
    }

    private static func checkReadable(_ path: String, _ setting: String, request: RequestSummary) throws(CurlewError) {
        var info = stat()
        let problem: String?
        if stat(path, &info) != 0 {
            problem = errno == ENOENT || errno == ENOTDIR ? "does not exist" : "cannot be read (\(String(cString: strerror(errno))))"
        } else if info.st_mode & S_IFMT == S_IFDIR {
            problem = "is a folder, not a PEM file"
        } else if access(path, R_OK) != 0 {
            problem = "cannot be read (\(String(cString: strerror(errno))))"
        } else {
            problem = nil
        }
        guard let problem else { return }
        var error = CurlewError(code: .invalidConnectionSettings, message: "\(setting) names \(path), which \(problem); nothing was sent", request: request)
        error.stage = .configuration
        throw error
    }

    private static func checkSpeed(_ speed: Int?, _ name: String, request: RequestSummary) throws(CurlewError) {
        guard let speed, speed <= 0 else { return }
        throw CurlewError(code: .invalidConnectionSettings, message: "\(name) must be a positive number of bytes per second, not \(speed)", request: request)
    }
}

/// The proxy options of one request, checked.
private struct ProxyLine {
    var url: String?
    var type: curl_proxytype = CURLPROXY_HTTP
    var username: String?
    var password: String?
    var excluded: String?

    /// `nil` for ``ProxyConfiguration/environment`` (nothing to set: libcurl reads the variables).
    init?(_ proxy: ProxyConfiguration, request: RequestSummary) throws(CurlewError) {
        switch proxy.mode {
        case .environment:
            return nil
        case .direct:
            // An empty proxy string tells libcurl to ignore the environment's variables.
            url = ""
        case .server(let server):
            guard HostOverride.isHostLike(server.host), (1...65_535).contains(server.port) else {
                throw CurlewError(code: .invalidConnectionSettings, message: "the proxy \(proxy) has an invalid host or port", request: request)
            }
            for host in server.excludedHosts where host != "*" && !HostOverride.isHostLike(host) {
                throw CurlewError(code: .invalidConnectionSettings, message: "the proxy exclusion \"\(host)\" is not a host name or address", request: request)
            }
            let host = server.host.contains(":") && !server.host.hasPrefix("[") ? "[\(server.host)]" : server.host
            url = "\(host):\(server.port)"
            type = server.kind == .http ? CURLPROXY_HTTP : CURLPROXY_SOCKS5_HOSTNAME
            username = server.username
            password = server.password
            excluded = server.excludedHosts.isEmpty ? nil : server.excludedHosts.joined(separator: ",")
        }
    }

    func apply(_ setter: CurlOptionSetter) throws(CurlewError) {
        try setter.set(CURLOPT_PROXY, url)
        guard url?.isEmpty == false else {
            // Direct: libcurl still reads `no_proxy` and `NO_PROXY` from the environment on
            // every transfer unless an exclusion list is set; an empty one is never consulted
            // (the proxy is empty already) and saves both `getenv` calls.
            try setter.set(CURLOPT_NOPROXY, "")
            return
        }
        try setter.set(CURLOPT_PROXYTYPE, Int(type.rawValue))
        if let username { try setter.set(CURLOPT_PROXYUSERNAME, username) }
        if let password { try setter.set(CURLOPT_PROXYPASSWORD, password) }
        if let excluded { try setter.set(CURLOPT_NOPROXY, excluded) }
    }
}
