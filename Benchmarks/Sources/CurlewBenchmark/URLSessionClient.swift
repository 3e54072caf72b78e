import Foundation
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// FoundationNetworking's `URLSession` (itself built on libcurl on Linux): ephemeral
/// configuration, up to 64 connections per host, `data(from:)`.
struct URLSessionClient: BenchmarkClient {
    private let session: URLSession
    private let url: URL

    init(url: String) throws {
        guard let parsed = URL(string: url) else { throw InvalidURL(text: url) }
        let configuration = URLSessionConfiguration.ephemeral
        configuration.httpMaximumConnectionsPerHost = 64
        self.session = URLSession(configuration: configuration)
        self.url = parsed
    }

    func fetch() async throws -> (status: Int, bodyBytes: Int) {
        let (data, response) = try await session.data(from: url)
        guard let http = response as? HTTPURLResponse else { return (0, data.count) }
        return (http.statusCode, data.count)
    }

    func shutdown() async {
        session.invalidateAndCancel()
    }

    /// The benchmark URL could not be parsed by `URL`.
    struct InvalidURL: Error {
        let text: String
    }
}
