import Curlew
import CurlewTesting
import Foundation
import Testing

/// The README's "Describing requests and decoding responses" examples, compiled and run.
enum ReadmeDescribing {
    enum Sort: String, ParameterConvertible { case newest, popular }
    protocol MediaItem: Decodable, Sendable {}
    struct PicItem: MediaItem { var picUrl: String }
    enum MediaFamily: PolymorphicFamily {
        typealias Member = any MediaItem
        static var members: [String: any Decodable.Type] { ["pic": PicItem.self] }
    }
    struct Picture: Decodable, Sendable, Equatable { var id: String }

    struct MediaSearchRequest: Endpoint {
        typealias Response = PolymorphicArray<MediaFamily>
        @Query var key: String                          // ?q=… (renamed below)
        @Query var limit: Int = 10
        @Query("sort") var order: Sort? = nil           // a name in the attribute needs a default
        @Header("X-Client") var clientName: String? = nil   // a header; nil is omitted
        @Path var album: Int                            // fills {album}, encoded as one segment
        var note = "not a parameter"

        static let parameterNames = ["key": "q"]
        var path: String { "albums/{album}/search" }
        var keyPath: String? { "resp.data" }
    }

    struct EnvelopeRequest: Endpoint {
        typealias Response = [Picture]
        var path: String { "e" }
        func decode(_ response: RawResponse, decoder: JSONDecoder) throws -> [Picture] {
            let resp = try response.json(at: "resp")
            guard resp.code == 0 else {
                throw CurlewError.serverError(businessCode: "\(resp.code?.intValue ?? -1)", message: resp.msg?.stringValue ?? "")
            }
            return try response.decode(at: "resp.data", decoder: decoder)
        }
    }
}

@Suite("README: describing requests")
struct ReadmeDescribingTests {
    @Test func theExamplesWork() async throws {
        let transport = MockTransport { request in
            request.url.hasSuffix("/e")
                ? .json(#"{"resp":{"code":7,"msg":"busy"}}"#, for: request)
                : .json(#"{"resp":{"data":[{"type":"pic","picUrl":"a.jpg"}]}}"#, for: request)
        }
        let client = APIClient(baseURL: "https://api.test", transport: transport)
        let media = try await client.send(ReadmeDescribing.MediaSearchRequest(key: "sunset", album: 7))
        #expect(media.elements.count == 1)
        #expect(transport.requests.first?.url == "https://api.test/albums/7/search?limit=10&q=sunset")
        let error = await #expect(throws: CurlewError.self) { try await client.send(ReadmeDescribing.EnvelopeRequest()) }
        #expect(error?.businessCode == "7")
    }
}
