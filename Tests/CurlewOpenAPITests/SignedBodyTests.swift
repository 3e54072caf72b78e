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

    @Test("A .single JSON body is read once, signed over its members, and sent once: a retryable 503 comes back as it is")
    func singleJSONBodySignedAndSentOnce() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        store.state.withLock { $0.flakyStatuses = [503] }
        let signature = try #require(HTTPField.Name("X-Sign"))
        let middleware: [any APIMiddleware] = [
            RetryMiddleware(maximumAttempts: 3, baseDelay: .milliseconds(1)), SigningMiddleware(secret: "s3cret", output: .header(signature)),
        ]
        let transport = CurlewTransport(client: APIClient(configuration: ClientConfiguration(baseURL: store.server.baseURL, middleware: middleware)))
        var request = HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/blobs/flaky")
        request.headerFields[.contentType] = "application/json; charset=utf-8"
        let json = Array(#"{"name":"Kiwi","tags":["a"]}"#.utf8)
        let body = HTTPBody(
            ScriptedChunks(chunks: [Array(json[..<7]), Array(json[7...])], failure: nil), length: .known(Int64(json.count)), iterationBehavior: .single)
        let (response, _) = try await transport.send(request, body: body, baseURL: try store.serverURL, operationID: "uploadBlob")
        #expect(response.status.code == 503)
        let received = store.server.requests(path: "/v1/blobs/flaky")
        #expect(received.count == 1)
        #expect(received.first?.body == json)
        var signed = PreparedRequest(method: .put, url: store.server.baseURL + "/v1/blobs/flaky", body: Data(json))
        signed.headers[.contentType] = "application/json; charset=utf-8"
        let expected = SigningMiddleware.signature(of: SigningMiddleware.canonicalString(for: signed), secret: "s3cret", algorithm: .md5)
        #expect(received.first?.header("X-Sign") == expected)
        // The members are in what was signed: a signature over an empty body differs.
        var unsigned = signed
        unsigned.body = Data()
        #expect(expected != SigningMiddleware.signature(of: SigningMiddleware.canonicalString(for: unsigned), secret: "s3cret", algorithm: .md5))
    }

    @Test("A .single JSON body gets the common arguments in its members and stays one-shot")
    func singleJSONBodyGetsCommonArguments() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        store.state.withLock { $0.flakyStatuses = [503] }
        let middleware: [any APIMiddleware] = [
            RetryMiddleware(maximumAttempts: 3, baseDelay: .milliseconds(1)), CommonArgumentsMiddleware(parameters: ["app": "kea"], placement: .body),
        ]
        let transport = CurlewTransport(client: APIClient(configuration: ClientConfiguration(baseURL: store.server.baseURL, middleware: middleware)))
        var request = HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/blobs/flaky")
        request.headerFields[.contentType] = "application/json"
        let json = Array(#"{"name":"Kiwi"}"#.utf8)
        let body = HTTPBody(ScriptedChunks(chunks: [json], failure: nil), length: .known(Int64(json.count)), iterationBehavior: .single)
        let (response, _) = try await transport.send(request, body: body, baseURL: try store.serverURL, operationID: "uploadBlob")
        #expect(response.status.code == 503)
        let received = store.server.requests(path: "/v1/blobs/flaky")
        #expect(received.count == 1)
        #expect(received.first.map { String(decoding: $0.body, as: UTF8.self) } == #"{"app":"kea","name":"Kiwi"}"#)
    }
}
