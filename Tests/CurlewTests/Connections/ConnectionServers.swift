import Curlew
import Foundation
import HTTPTypes
import TestSupport
import Testing

/// The servers `scripts/connection-servers.sh` starts (nginx with TLS and HTTP/2, tinyproxy,
/// microsocks) and the certificates it generated, from the environment. Tests that need them fail
/// when they are not running.
struct ConnectionServers {
    let tlsURL: String
    let wrongHostURL: String
    let expiredURL: String
    let selfSignedURL: String
    let mutualTLSURL: String
    let shortKeepAliveURL: String
    let tlsDirectory: String
    let logs: String
    let httpProxy: (host: String, port: Int)
    let socksProxy: (host: String, port: Int)
    let proxyUser: String
    let proxyPassword: String

    struct Missing: Error, CustomStringConvertible {
        var description: String {
            "CURLEW_NGINX_TLS_URL is not set: start the servers with `eval \"$(bash scripts/connection-servers.sh start)\"`"
        }
    }

    static func fromEnvironment() throws -> ConnectionServers {
        let environment = TestServers.environment
        func value(_ name: String) throws -> String {
            guard let value = environment[name], !value.isEmpty else { throw Missing() }
            return value
        }
        func hostAndPort(_ name: String) throws -> (host: String, port: Int) {
            let text = try value(name)
            guard let colon = text.lastIndex(of: ":"), let port = Int(text[text.index(after: colon)...]) else { throw Missing() }
            return (String(text[..<colon]), port)
        }
        return ConnectionServers(
            tlsURL: try value("CURLEW_NGINX_TLS_URL"),
            wrongHostURL: try value("CURLEW_NGINX_TLS_WRONG_HOST_URL"),
            expiredURL: try value("CURLEW_NGINX_TLS_EXPIRED_URL"),
            selfSignedURL: try value("CURLEW_NGINX_TLS_SELF_SIGNED_URL"),
            mutualTLSURL: try value("CURLEW_NGINX_MTLS_URL"),
            shortKeepAliveURL: try value("CURLEW_NGINX_SHORT_KEEPALIVE_URL"),
            tlsDirectory: try value("CURLEW_TLS_DIR"),
            logs: try value("CURLEW_CONNECTIONS_LOGS"),
            httpProxy: try hostAndPort("CURLEW_HTTP_PROXY"),
            socksProxy: try hostAndPort("CURLEW_SOCKS_PROXY"),
            proxyUser: try value("CURLEW_PROXY_USER"),
            proxyPassword: try value("CURLEW_PROXY_PASSWORD"))
    }

    /// A generated file, e.g. `ca.pem`.
    func path(_ name: String) -> String { tlsDirectory + "/" + name }

    func contents(_ name: String) throws -> Data { try Data(contentsOf: URL(fileURLWithPath: path(name))) }

    /// The pin file the script wrote for a certificate.
    func pin(_ name: String) throws -> PublicKeyPin {
        try #require(PublicKeyPin(String(decoding: contents(name), as: UTF8.self)))
    }

    /// Connection options trusting only the test CA (from its file).
    var trustingTestCA: ConnectionOptions {
        var options = ConnectionOptions()
        options.tls.trustRoots = .file(path("ca.pem"))
        return options
    }

    /// The port of a URL such as `https://127.0.0.1:4443`.
    static func port(of url: String) -> Int {
        url.split(separator: ":").last.flatMap { Int($0) } ?? 0
    }

    /// A log file of the servers, e.g. `tinyproxy.log`.
    func log(_ name: String) -> String {
        (try? String(contentsOfFile: logs + "/" + name, encoding: .utf8)) ?? ""
    }
}

/// `GET /conn`: nginx answers "<connection serial> <protocol>".
struct ConnectionProbe: Endpoint {
    typealias Response = String
    var path: String { "conn" }
}

/// What `/conn` said: nginx's connection serial number and the protocol it spoke.
struct ProbeAnswer: Hashable {
    var connection: Int
    var protocolName: String

    init(_ text: String) {
        let parts = text.split(separator: " ")
        connection = parts.first.flatMap { Int($0) } ?? -1
        protocolName = parts.count > 1 ? String(parts[1]) : ""
    }
}

/// Any path, the body as text.
struct TextGet: Endpoint {
    typealias Response = String
    var path: String
}

/// A client on `transport` with the given connection options.
func connectionClient(_ baseURL: String, _ connection: ConnectionOptions, transport: CurlTransport, httpVersion: TransferOptions.HTTPVersion = .automatic) -> APIClient {
    var options = TransferOptions()
    options.connection = connection
    options.httpVersion = httpVersion
    return APIClient(configuration: ClientConfiguration(baseURL: baseURL, transferOptions: options), transport: transport)
}

// `withTransport(_:)` lives in Support/HardeningHelpers.swift.

/// The code of the `CurlewError` `body` throws, `nil` when it succeeds or throws something else.
func curlewCode(_ body: () async throws -> some Any) async -> CurlewError.Code? {
    do {
        _ = try await body()
        return nil
    } catch let error as CurlewError {
        return error.code
    } catch {
        return nil
    }
}
