import AsyncHTTPClient
import NIOCore
import NIOPosix
import NIOSSL

/// AsyncHTTPClient 1.37.0: HTTP/1.1 only (or HTTP/2 by ALPN with `http2`), a pool allowing 64
/// connections to the host, on NIO's shared two-thread event loop group
/// (`MultiThreadedEventLoopGroup.singleton`); over https it trusts `caFile`.
struct AsyncHTTPClientClient: BenchmarkClient {
    private let client: HTTPClient
    private let request: HTTPClientRequest

    init(url: String, caFile: String? = nil, http2: Bool = false) throws {
        var configuration = HTTPClient.Configuration()
        configuration.httpVersion = http2 ? .automatic : .http1Only
        if let caFile {
            var tls = TLSConfiguration.makeClientConfiguration()
            tls.trustRoots = .file(caFile)
            configuration.tlsConfiguration = tls
        }
        configuration.connectionPool = .init(idleTimeout: .seconds(60), concurrentHTTP1ConnectionsPerHostSoftLimit: 64)
        client = HTTPClient(eventLoopGroup: MultiThreadedEventLoopGroup.singleton, configuration: configuration)
        request = HTTPClientRequest(url: url)
    }

    func fetch() async throws -> (status: Int, bodyBytes: Int) {
        let response = try await client.execute(request, timeout: .seconds(30))
        let body = try await response.body.collect(upTo: 1 << 20)
        return (Int(response.status.code), body.readableBytes)
    }

    func shutdown() async {
        do {
            try await client.shutdown()
        } catch {
            Console.error("AsyncHTTPClient shutdown failed: \(error)")
        }
    }
}
