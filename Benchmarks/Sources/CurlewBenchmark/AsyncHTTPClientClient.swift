import AsyncHTTPClient
import NIOCore
import NIOPosix

/// AsyncHTTPClient 1.37.0: HTTP/1.1 only, a pool allowing 64 connections to the host, on NIO's
/// shared two-thread event loop group (`MultiThreadedEventLoopGroup.singleton`).
struct AsyncHTTPClientClient: BenchmarkClient {
    private let client: HTTPClient
    private let request: HTTPClientRequest

    init(url: String) {
        var configuration = HTTPClient.Configuration()
        configuration.httpVersion = .http1Only
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
