import Curlew
@testable import CurlewOpenAPI
import Foundation
import HTTPTypes
import OpenAPIRuntime
import Testing

/// The error a producer throws while a request body is read.
struct ProducerFailure: Error, Equatable {}

/// A request body whose sequence can be iterated again: `chunks`, then `ending` (nothing, or an
/// error thrown after the last chunk).
struct ScriptedChunks: AsyncSequence, Sendable {
    typealias Element = ArraySlice<UInt8>
    typealias Failure = any Error
    let chunks: [[UInt8]]
    let failure: ProducerFailure?

    func makeAsyncIterator() -> Iterator { Iterator(chunks: chunks[...], failure: failure) }

    struct Iterator: AsyncIteratorProtocol {
        typealias Element = ArraySlice<UInt8>
        typealias Failure = any Error
        var chunks: ArraySlice<[UInt8]>
        let failure: ProducerFailure?

        mutating func next() async throws -> ArraySlice<UInt8>? {
            if let chunk = chunks.popFirst() { return ArraySlice(chunk) }
            if let failure { throw failure }
            return nil
        }
    }
}

/// A request body that fails, or whose length is not the one it announced, fails the call the
/// same way whatever its shape: `.single` or `.multiple`, read into memory first (a short body of
/// known length) or streamed. The error is a `CurlewError` of code `.bodyStreamFailed` (with the
/// producer's error underneath), inside the runtime's `ClientError`.
@Suite("CurlewTransport: request bodies that fail")
struct RequestBodyFailureTests {
    /// The body shapes the transport sends differently.
    enum Shape: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case bufferedMultiple = "a .multiple body of known length, read into memory"
        case streamedMultiple = "a .multiple body of unknown length, streamed"
        case single = "a .single body of known length, streamed"

        var testDescription: String { rawValue }

        func body(_ chunks: ScriptedChunks, announcing length: Int) -> HTTPBody {
            switch self {
            case .bufferedMultiple: HTTPBody(chunks, length: .known(Int64(length)), iterationBehavior: .multiple)
            case .streamedMultiple: HTTPBody(chunks, length: .unknown, iterationBehavior: .multiple)
            case .single: HTTPBody(chunks, length: .known(Int64(length)), iterationBehavior: .single)
            }
        }
    }

    func upload(_ body: HTTPBody, named name: String, to store: PetStoreServer) async throws {
        let api = APIClient(configuration: ClientConfiguration(baseURL: store.server.baseURL))
        let client = Client(serverURL: try store.serverURL, transport: CurlewTransport(client: api))
        _ = try await client.uploadBlob(path: .init(name: name), body: .binary(body))
    }

    @Test("A producer that throws: .bodyStreamFailed with the producer's error underneath", arguments: Shape.allCases)
    func producerThrows(shape: Shape) async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        let label = shape.rawValue
        let body = shape.body(ScriptedChunks(chunks: [[1, 2]], failure: ProducerFailure()), announcing: 4)
        let error = await #expect(throws: ClientError.self, "\(label)") { try await upload(body, named: "failing", to: store) }
        let curlew = try #require(error.flatMap(curlewError(of:)), "\(label): \(String(describing: error?.underlyingError))")
        #expect(curlew.code == .bodyStreamFailed, "\(label)")
        #expect(curlew.underlying as? ProducerFailure == ProducerFailure(), "\(label)")
        #expect(store.uploads.isEmpty, "\(label)")
    }

    @Test("A body shorter than its announced length: .bodyStreamFailed, nothing accepted", arguments: [Shape.bufferedMultiple, .single])
    func shorterThanAnnounced(shape: Shape) async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        let label = shape.rawValue
        let body = shape.body(ScriptedChunks(chunks: [[1, 2, 3]], failure: nil), announcing: 10)
        let error = await #expect(throws: ClientError.self, "\(label)") { try await upload(body, named: "short", to: store) }
        let curlew = error.flatMap(curlewError(of:))
        #expect(curlew?.code == .bodyStreamFailed, "\(label): \(String(describing: error?.underlyingError))")
        #expect(curlew?.message == "the request body stream ended after 3 of its declared 10 bytes", "\(label)")
        #expect(store.uploads.isEmpty, "\(label)")
    }

    /// An error the transport makes itself (here: a body shorter than announced) redacts the
    /// query keys the client calls secret, like every error of the client.
    @Test func anErrorTheTransportMakesRedactsTheClientsSecretQueryKeys() async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        let api = APIClient(configuration: ClientConfiguration(baseURL: store.server.baseURL, secretQueryKeyFragments: ["sig"]))
        let transport = CurlewTransport(client: api)
        let body = Shape.bufferedMultiple.body(ScriptedChunks(chunks: [[1, 2, 3]], failure: nil), announcing: 10)
        let base = try #require(URL(string: store.server.baseURL))
        let error = await #expect(throws: CurlewError.self) {
            try await transport.send(
                HTTPRequest(method: .put, scheme: nil, authority: nil, path: "/v1/blobs/short?sig=s3cr3t"), body: body, baseURL: base,
                operationID: "uploadBlob")
        }
        #expect(error?.code == .bodyStreamFailed)
        #expect(error?.request.map { !$0.redactedURL.contains("s3cr3t") } == true)
        #expect(error.map { !String(describing: $0).contains("s3cr3t") } == true)
    }

    @Test("A body longer than its announced length: .bodyStreamFailed, nothing accepted", arguments: [Shape.bufferedMultiple, .single])
    func longerThanAnnounced(shape: Shape) async throws {
        let store = try await PetStoreServer.start()
        defer { Task { await store.shutdown() } }
        let label = shape.rawValue
        let body = shape.body(ScriptedChunks(chunks: [[1, 2], [3, 4, 5]], failure: nil), announcing: 3)
        let error = await #expect(throws: ClientError.self, "\(label)") { try await upload(body, named: "long", to: store) }
        let curlew = error.flatMap(curlewError(of:))
        #expect(curlew?.code == .bodyStreamFailed, "\(label): \(String(describing: error?.underlyingError))")
        #expect(curlew?.message == "the request body stream produced more than its declared 3 bytes", "\(label)")
        #expect(store.uploads.isEmpty, "\(label)")
    }

    /// A body read into memory reserves at most 1 MiB of its declared length up front: a
    /// declared 100 TB (the body's word, not yet checked) stopped the process in the reservation.
    @Test("A body read into memory that declares 100 TB: .bodyStreamFailed, no reservation of it")
    func aHugeDeclaredLengthIsNotReserved() async throws {
        let body = HTTPBody(ScriptedChunks(chunks: [[1, 2, 3]], failure: nil), length: .known(100_000_000_000_000), iterationBehavior: .multiple)
        let error = await #expect(throws: CurlewError.self) {
            _ = try await CurlewTransport.collect(body, length: 100_000_000_000_000, request: RequestSummary(method: .post, url: "http://127.0.0.1/blob"))
        }
        #expect(error?.code == .bodyStreamFailed)
        #expect(error?.message == "the request body stream ended after 3 of its declared 100000000000000 bytes")
    }
}
