import Curlew
import CurlewOpenAPI
import CurlewTesting
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

/// The header fields two answers must agree on to be indistinguishable: everything but the
/// per-exchange framing (`Date`, `Content-Length`, `Connection`, `Keep-Alive`), in order.
func comparableFields(_ fields: HTTPFields) -> [String] {
    let perExchange: Set<String> = ["date", "content-length", "connection", "keep-alive"]
    return fields.filter { !perExchange.contains($0.name.canonicalName) }.map { "\($0.name.canonicalName): \($0.value)" }
}

@Suite("Generated client: multipart, revalidation, fixtures")
struct GeneratedClientTests {
    func makeClient(_ store: PetStoreServer, middleware: [any APIMiddleware] = [], configuration: CurlewTransport.Configuration = .init(), recorder: HeadRecorder? = nil) throws -> Client {
        let api = APIClient(configuration: ClientConfiguration(baseURL: store.server.baseURL, middleware: middleware))
        return Client(serverURL: try store.serverURL, transport: CurlewTransport(client: api, configuration: configuration), middlewares: recorder.map { [$0] } ?? [])
    }

    @Test("A multipart upload: the server sees each part's name, filename, content type and bytes, in order")
    func multipartUpload() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        let client = try makeClient(store)
        // 70,000 pattern bytes: more than one read-callback buffer, and every byte value.
        let photo = Array(PetStoreServer.patternChunk[0..<70_000])
        let parts: MultipartBody<Operations.UploadPhoto.Input.Body.MultipartFormPayload> = [
            .caption(.init(payload: .init(body: "Rex at the beach"))),
            .photo(.init(payload: .init(body: HTTPBody(photo)), filename: "rex.png")),
            .notes(.init(payload: .init(body: "first"))),
            .notes(.init(payload: .init(body: "second"))),
        ]
        let receipts = try await client.uploadPhoto(path: .init(petId: 5), body: .multipartForm(parts)).created.body.json
        #expect(receipts.map(\.name) == ["caption", "photo", "notes", "notes"])
        #expect(receipts.map(\.bytes) == [16, 70_000, 5, 6])
        let uploads = store.state.withLock { $0.photoUploads }
        #expect(uploads.count == 1)
        let seen = try #require(uploads.first)
        #expect(
            seen == [
                RecordedMultipartPart(name: "caption", contentType: "text/plain", headers: seen[0].headers, body: Data("Rex at the beach".utf8)),
                RecordedMultipartPart(name: "photo", filename: "rex.png", contentType: "image/png", headers: seen[1].headers, body: Data(photo)),
                RecordedMultipartPart(name: "notes", contentType: "text/plain", headers: seen[2].headers, body: Data("first".utf8)),
                RecordedMultipartPart(name: "notes", contentType: "text/plain", headers: seen[3].headers, body: Data("second".utf8)),
            ])
        #expect(store.count("POST /v1/pets/5/photos") == 1)
    }

    @Test("ETag revalidation: the server answers one 200 then 304s; the generated client gets the stored body, as a fresh answer")
    func revalidationServesStoredBody() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        var options = RequestOptions()
        options.cache = .http
        var configuration = CurlewTransport.Configuration()
        configuration.operations[Operations.GetPet.id] = OperationPolicy(options: options)
        let recorder = HeadRecorder()
        let cache = ResponseCache(storage: MemoryCacheStorage(), credentials: .anonymous)
        let client = try makeClient(store, middleware: [cache], configuration: configuration, recorder: recorder)
        var pets: [Components.Schemas.Pet] = []
        for _ in 0..<3 { pets.append(try await client.getPet(path: .init(petId: 42)).ok.body.json) }
        #expect(pets == Array(repeating: Components.Schemas.Pet(id: 42, name: "Rex", tag: "dog"), count: 3))
        let answers = store.state.withLock { $0.revalidation }
        #expect(answers.ok == 1)
        #expect(answers.notModified == 2)
        let heads = recorder.responses.withLock { $0 }
        #expect(heads.map(\.status.code) == [200, 200, 200])
        let fresh = try #require(heads.first)
        for revalidated in heads.dropFirst() {
            #expect(comparableFields(revalidated.headerFields) == comparableFields(fresh.headerFields))
        }
        #expect(fresh.headerFields[.eTag] == #""rex-v1""#)
        #expect(fresh.headerFields[values: HTTPField.Name("X-Trace")!] == ["first", "second"])
    }

    @Test("A call answered from a recorded fixture (MockMiddleware) is indistinguishable to the generated client")
    func fixtureAnswerIndistinguishable() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-openapi-fixtures-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }

        // Recorded from the network (the recorder keeps collected bodies only).
        var recording = CurlewTransport.Configuration()
        recording.operations[Operations.GetPet.id] = OperationPolicy(responseBody: .collect)
        let networkHeads = HeadRecorder()
        let network = try makeClient(store, middleware: [try FixtureRecorder(directory: directory)], configuration: recording, recorder: networkHeads)
        let live = try await client(network, petId: 3)
        #expect(FileManager.default.fileExists(atPath: directory + "/getPet.json"))

        // Replayed by the mock, the generated client's operation unchanged, its body streamed.
        let mockedHeads = HeadRecorder()
        let mocked = try makeClient(store, middleware: [MockMiddleware(.fixtures(try FixtureStore(directory: directory)))], recorder: mockedHeads)
        let replayed = try await client(mocked, petId: 3)
        #expect(live == Components.Schemas.Pet(id: 3, name: "Pet 3"))
        #expect(replayed == live)
        #expect(store.count("GET /v1/pets/3") == 1)
        let liveHead = try #require(networkHeads.responses.withLock { $0.first })
        let mockedHead = try #require(mockedHeads.responses.withLock { $0.first })
        #expect(mockedHead.status == liveHead.status)
        #expect(comparableFields(mockedHead.headerFields) == comparableFields(liveHead.headerFields))

        // A per-operation stub, set in the transport's policy: the generated code cannot tell.
        var stubbed = CurlewTransport.Configuration()
        var options = RequestOptions()
        options.mock = .answer(MockAnswer(status: .ok, headers: [.contentType: "application/json"], body: Data(#"{"id":3,"name":"Pet 3"}"#.utf8)))
        stubbed.operations[Operations.GetPet.id] = OperationPolicy(options: options)
        let stub = try makeClient(store, configuration: stubbed)
        #expect(try await client(stub, petId: 3) == live)
        #expect(store.count("GET /v1/pets/3") == 1)
    }

    func client(_ client: Client, petId: Int) async throws -> Components.Schemas.Pet {
        try await client.getPet(path: .init(petId: petId)).ok.body.json
    }
}
