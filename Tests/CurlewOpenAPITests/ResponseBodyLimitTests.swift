import Curlew
import CurlewOpenAPI
import Foundation
import HTTPTypes
import LoopbackServer
import OpenAPIRuntime
import Testing

/// An operation's `RequestOptions.maximumBodySize` caps its response body whether the body is
/// collected or streamed (the default): the generated code reads a JSON body with no limit of
/// its own, so the operation's policy is the only place a user can set one.
@Suite("CurlewTransport: an operation's maximum body size")
struct ResponseBodyLimitTests {
    func client(_ store: PetStoreServer, limit: Int, responseBody: OperationPolicy.ResponseBodyHandling = .automatic) throws -> Client {
        var configuration = CurlewTransport.Configuration()
        configuration.operations[Operations.DownloadBlob.id] = OperationPolicy(options: RequestOptions(maximumBodySize: limit), responseBody: responseBody)
        let api = APIClient(configuration: ClientConfiguration(baseURL: store.server.baseURL))
        return Client(serverURL: try store.serverURL, transport: CurlewTransport(client: api, configuration: configuration))
    }

    @Test(
        "A streamed body announced longer than the operation's limit fails the call with .bodyTooLarge, as a collected one does",
        arguments: [OperationPolicy.ResponseBodyHandling.automatic, .stream(highWaterMark: 64 << 10), .collect])
    func announcedTooLarge(handling: OperationPolicy.ResponseBodyHandling) async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        let client = try client(store, limit: 1 << 20, responseBody: handling)
        let error = await #expect(throws: ClientError.self) { _ = try await client.downloadBlob(path: .init(name: "2")) }
        let curlew = error.flatMap(curlewError(of:))
        #expect(curlew?.code == .bodyTooLarge, "\(handling): \(String(describing: error?.underlyingError))")
        #expect(curlew?.stage == .transport)
        // A body of exactly the limit is whole.
        let body = try await client.downloadBlob(path: .init(name: "1")).ok.body.binary
        #expect(try await Data(collecting: body, upTo: 2 << 20).count == 1 << 20)
    }

    @Test("A streamed body without a length fails its reading with .bodyTooLarge past the limit, and the transfer stops")
    func unannouncedTooLarge() async throws {
        let chunk = [UInt8](repeating: 7, count: 256 << 10)
        let server = try await LoopbackServer.start { request in
            let connection = request.connection
            return .stream(headers: [("Content-Type", "application/octet-stream")]) { writer in
                // Four chunks of 256 KiB are the limit; 16 MiB in all, unless the client goes away.
                for _ in 0..<64 where !connection.isClosed { try await writer.write(chunk) }
            }
        }
        defer { Task { await server.shutdown() } }
        var configuration = CurlewTransport.Configuration()
        configuration.defaultPolicy = OperationPolicy(options: RequestOptions(maximumBodySize: 1 << 20))
        let transport = CurlewTransport(client: APIClient(configuration: ClientConfiguration(baseURL: server.baseURL)), configuration: configuration)
        let base = try #require(URL(string: server.baseURL))
        let (response, body) = try await transport.send(
            HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/endless"), body: nil, baseURL: base, operationID: "endless")
        #expect(response.status == .ok)
        var received = 0
        let error = await #expect(throws: CurlewError.self) {
            for try await piece in try #require(body) { received += piece.count }
        }
        #expect(error?.code == .bodyTooLarge)
        #expect(received <= 1 << 20)
        #expect(await eventually { server.inFlight(path: "/endless") == 0 })
    }

    @Test("A forwarded answer (a status the middleware saw, handed back to the generated client) announced longer than the limit fails the call too")
    func forwardedAnnouncedTooLarge() async throws {
        let server = try await LoopbackServer.start { _ in
            ServerResponse(status: 503, headers: [("Content-Type", "application/octet-stream")], body: [UInt8](repeating: 1, count: 2 << 20))
        }
        defer { Task { await server.shutdown() } }
        var configuration = CurlewTransport.Configuration()
        configuration.middlewareStatuses = [503]
        configuration.defaultPolicy = OperationPolicy(options: RequestOptions(maximumBodySize: 1 << 20))
        let transport = CurlewTransport(client: APIClient(configuration: ClientConfiguration(baseURL: server.baseURL)), configuration: configuration)
        let base = try #require(URL(string: server.baseURL))
        let error = await #expect(throws: CurlewError.self) {
            _ = try await transport.send(
                HTTPRequest(method: .get, scheme: nil, authority: nil, path: "/busy"), body: nil, baseURL: base, operationID: "busy")
        }
        #expect(error?.code == .bodyTooLarge)
        #expect(error?.stage == .transport)
    }
}
