import Curlew
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

struct Picture: Codable, Sendable, Equatable {
    var id: String
    var title: String
}

struct PictureList: Codable, Sendable, Equatable {
    var data: [Picture]
}

/// GETs decoding into a chosen JSON type (a generic request picks the `Decodable` default).
struct Fetch<Value: Decodable & Sendable>: Endpoint {
    typealias Response = Value
    var path: String
    var widened: Set<Int> = []
    func accepts(_ status: HTTPResponse.Status) -> Bool { status.kind == .successful || widened.contains(status.code) }
}

struct FetchData: Endpoint {
    typealias Response = Data
    var path: String
}

struct FetchText: Endpoint {
    typealias Response = String
    var path: String
}

struct FetchNothing: Endpoint {
    typealias Response = EmptyResponse
    var path: String
}

@Suite("Decoding responses")
struct DecodingTests {
    func client(status: HTTPResponse.Status = .ok, body: String) -> APIClient {
        APIClient(baseURL: "https://api.test", transport: MockTransport { .json(body, status: status, for: $0) })
    }

    @Test func decodesDecodableJSON() async throws {
        let value = try await client(body: #"{"data":[{"id":"1","title":"Dunes"}]}"#).send(Fetch<PictureList>(path: "p"))
        #expect(value == PictureList(data: [Picture(id: "1", title: "Dunes")]))
    }

    @Test func returnsDataStringAndEmpty() async throws {
        let client = client(body: "héllo")
        #expect(try await client.send(FetchData(path: "p")) == Data("héllo".utf8))
        #expect(try await client.send(FetchText(path: "p")) == "héllo")
        #expect(try await client.send(FetchNothing(path: "p")) == EmptyResponse())
    }

    @Test func invalidUTF8IsADataFormatError() async {
        let client = APIClient(
            baseURL: "https://api.test",
            transport: MockTransport {
                RawResponse(status: .ok, body: Data([0xC3, 0x28]), url: $0.url)
            })
        let error = await #expect(throws: CurlewError.self) { try await client.send(FetchText(path: "p")) }
        #expect(error?.level == .dataFormat)
    }

    @Test func decodingFailureNamesThePathAndWhatWasFound() async {
        let body = #"{"data":[{"id":"1","title":"a"},{"id":"2","title":"b"},{"id":"3","title":"c"},{"id":4,"title":"d"}]}"#
        let error = await #expect(throws: CurlewError.self) { try await client(body: body).send(Fetch<PictureList>(path: "p")) }
        #expect(error?.code == .decodingFailed)
        #expect(error?.dataPath == "data[3].id")
        #expect(error?.message == "data[3].id: expected String, found number")
        #expect(error?.description.contains("GET https://api.test/p") == true)
    }

    @Test func missingKeyAndNullAreExplained() async {
        let missing = await #expect(throws: CurlewError.self) {
            try await client(body: #"{"data":[{"id":"1"}]}"#).send(Fetch<PictureList>(path: "p"))
        }
        #expect(missing?.message == "data[0].title: required key is missing")
        let null = await #expect(throws: CurlewError.self) {
            try await client(body: #"{"data":[{"id":null,"title":"x"}]}"#).send(Fetch<PictureList>(path: "p"))
        }
        #expect(null?.message == "data[0].id: expected String, found null")
    }

    @Test func deeplyNestedInputFailsWithAnError() async {
        let body = String(repeating: "[", count: 10_000) + String(repeating: "]", count: 10_000)
        let error = await #expect(throws: CurlewError.self) { try await client(body: body).send(Fetch<PictureList>(path: "p")) }
        #expect(error?.level == .dataFormat)
    }

    @Test func nonSuccessStatusCarriesStatusHeadersAndSnippet() async {
        let error = await #expect(throws: CurlewError.self) {
            try await client(status: .notFound, body: #"{"error":"no such picture"}"#).send(Fetch<Picture>(path: "p/9"))
        }
        #expect(error?.code == .unacceptableStatus)
        #expect(error?.level == .httpStatus)
        #expect(error?.status == .notFound)
        #expect(error?.headers?[.contentType] == "application/json")
        #expect(error?.bodySnippet == #"{"error":"no such picture"}"#)
    }

    @Test func aRequestCanWidenAcceptableStatuses() async throws {
        let response = try await client(status: .notFound, body: #"{"id":"0","title":"placeholder"}"#)
            .response(for: Fetch<Picture>(path: "p/9", widened: [404]))
        #expect(response.status == .notFound)
        #expect(response.value.title == "placeholder")
        #expect(response.source == .mock)
        #expect(response.body == Data(#"{"id":"0","title":"placeholder"}"#.utf8))
    }

    @Test func longBodiesAreCutInSnippets() {
        let snippet = CurlewError.snippet(of: Data(String(repeating: "x", count: 2_000).utf8))
        #expect(snippet?.count == CurlewError.bodySnippetLimit + 1)
        #expect(CurlewError.snippet(of: Data([0xFF, 0xFE, 0x00])) == "<3 bytes of binary data>")
    }
}

/// Dates in models go through the client's `JSONDecoder` and its date strategy (Monkey's
/// `dateFormat`, HAccess's date properties): one decoder per client, every endpoint's model.
@Suite("Decoding dates with the client's strategy")
struct DateStrategyTests {
    struct Post: Decodable, Sendable, Equatable {
        var title: String
        var published: Date
    }

    /// The post a client with `decoder` makes of an answer whose `published` is `date`.
    func published(_ date: String, decoder: JSONDecoder) async throws -> Post {
        let body = #"{"title":"Dunes","published":\#(date)}"#
        let client = APIClient(
            configuration: ClientConfiguration(baseURL: "https://api.test", decoder: decoder),
            transport: MockTransport { .json(body, status: .ok, for: $0) })
        return try await client.send(Fetch<Post>(path: "post"))
    }

    @Test func iso8601SecondsAndACustomFormat() async throws {
        let iso = JSONDecoder()
        iso.dateDecodingStrategy = .iso8601
        #expect(try await published(#""2026-11-26T08:30:00Z""#, decoder: iso).published == Date(timeIntervalSince1970: 1_795_681_800))

        let seconds = JSONDecoder()
        seconds.dateDecodingStrategy = .secondsSince1970
        #expect(try await published("1795681800", decoder: seconds).published == Date(timeIntervalSince1970: 1_795_681_800))

        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "Asia/Shanghai")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        let custom = JSONDecoder()
        custom.dateDecodingStrategy = .formatted(formatter)
        #expect(try await published(#""2026-11-26 16:30:00""#, decoder: custom).published == Date(timeIntervalSince1970: 1_795_681_800))
    }

    /// A date the strategy cannot read is a data-format error naming the field. (With `.iso8601`,
    /// swift-corelibs-foundation reports no coding path at all, so the message says `<root>`.)
    @Test func aDateInAnotherFormatNamesTheField() async throws {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        let custom = JSONDecoder()
        custom.dateDecodingStrategy = .formatted(formatter)
        do {
            _ = try await published(#""26/11/2026""#, decoder: custom)
            Issue.record("a date in another format was accepted")
        } catch let error as CurlewError {
            #expect(error.code == .decodingFailed)
            #expect(error.message.hasPrefix("published: "), "\(error.message)")
        }
    }
}
