import Curlew
import CurlewOpenAPI
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

/// A signature covers a JSON or form body's members, so the signer must see the body: a JSON
/// body the generated code gives is signed whatever its size, not only when it is short enough
/// to be read into memory before sending.
@Suite("CurlewTransport: signed JSON bodies")
struct SignedBodyTests {
    /// The signature the server computes over the request it received.
    static func expectedSignature(of request: (body: [UInt8], url: String)) -> String {
        var prepared = PreparedRequest(method: .post, url: request.url, body: Data(request.body))
        prepared.headers[.contentType] = "application/json; charset=utf-8"
        return SigningMiddleware.signature(of: SigningMiddleware.canonicalString(for: prepared), secret: "s3cret", algorithm: .md5)
    }

    @Test(
        "The signature a JSON body is sent with is the one the server computes over the body it received",
        arguments: [
            (nameLength: 3, bufferingLimit: 1 << 20),  // short: read into memory anyway
            (nameLength: 3, bufferingLimit: 0),  // nothing is read into memory for its size
            (nameLength: (1 << 20) + 1, bufferingLimit: 1 << 20),  // longer than the limit
        ])
    func signedJSONBody(nameLength: Int, bufferingLimit: Int) async throws {
        let name = String(repeating: "a", count: nameLength)
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        let signature = try #require(HTTPField.Name("X-Sign"))
        let api = APIClient(configuration: ClientConfiguration(baseURL: store.server.baseURL, middleware: [SigningMiddleware(secret: "s3cret", output: .header(signature))]))
        let transport = CurlewTransport(client: api, configuration: CurlewTransport.Configuration(requestBodyBufferingLimit: bufferingLimit))
        let client = Client(serverURL: try store.serverURL, transport: transport)
        let created = try await client.createPet(body: .json(.init(name: name))).created.body.json
        #expect(created.name == name, "the name the server echoed differs")
        let received = try #require(store.server.requests(path: "/v1/pets").first)
        #expect(received.body.count > name.utf8.count)
        #expect(received.header("X-Sign") == Self.expectedSignature(of: (received.body, store.server.baseURL + "/v1/pets")))
    }
}
