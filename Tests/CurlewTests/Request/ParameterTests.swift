import Curlew
import CurlewTesting
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

/// Renamed query parameters, a header and a plain property that is not a parameter.
struct DeclaredSearch: Endpoint {
    typealias Response = Data
    @Query var searchKey: String
    @Query var page: Int = 1
    @Query("size") var pageSize: Int? = nil
    @Header("X-Token") var token: String? = nil
    var retries = 3

    static let parameterNames = ["searchKey": "key"]
    var path: String { "pictures/search" }
}

/// A path template with two placeholders.
struct AlbumPicture: Endpoint {
    typealias Response = Data
    @Path var album: String
    @Path var pictureID: Int
    static let parameterNames = ["pictureID": "picture"]
    var path: String { "albums/{album}/pictures/{picture}" }
}

/// Body fields, query items on a POST, a dictionary of extra parameters.
struct NewPictureForm: Endpoint {
    typealias Response = Data
    @Field var title: String
    @Field var tags: [String]
    @Field("note") var note: String? = nil
    @Query("dry_run") var dryRun: Bool = false
    var encoding: ParameterEncoding = .form
    var encodingOptions: ParameterEncodingOptions = .default
    var extra: [String: ParameterValue] = [:]

    var method: HTTPRequest.Method { .post }
    var path: String { "pictures" }
    var parameterEncoding: ParameterEncoding { encoding }
    var parameterEncodingOptions: ParameterEncodingOptions { encodingOptions }
    var parameters: [String: ParameterValue] { extra }
}

/// Only a dictionary (LCNetwork's `requestArgument`).
struct DictionaryOnly: Endpoint {
    typealias Response = Data
    var values: [String: ParameterValue]
    var path: String { "list" }
    var parameters: [String: ParameterValue] { values }
    var parameterEncodingOptions: ParameterEncodingOptions
}

enum Sort: String, ParameterConvertible { case newest, popular }

@Suite("Declaring parameters")
struct ParameterTests {
    let client = APIClient(baseURL: "https://api.test/v1", transport: MockTransport { .text("ok", for: $0) })

    @Test func theCallSiteTakesPlainValues() throws {
        let prepared = try client.prepare(DeclaredSearch(searchKey: "sun set"))
        #expect(prepared.url == "https://api.test/v1/pictures/search?key=sun%20set&page=1")
        #expect(prepared.headers[HTTPField.Name("X-Token")!] == nil)
    }

    @Test func renamedKeysHeadersAndSortedOrder() throws {
        let prepared = try client.prepare(DeclaredSearch(searchKey: "a&b=c", page: 2, pageSize: 20, token: "t0k"))
        #expect(prepared.url == "https://api.test/v1/pictures/search?key=a%26b%3Dc&page=2&size=20")
        #expect(prepared.headers[HTTPField.Name("X-Token")!] == "t0k")
        #expect(!prepared.url.contains("retries"))
    }

    @Test func pathValuesAreEncodedNeverInterpreted() throws {
        let cases: [(String, String)] = [
            ("summer", "albums/summer/pictures/7"),
            ("../admin", "albums/..%2Fadmin/pictures/7"),
            ("a/b?c#d", "albums/a%2Fb%3Fc%23d/pictures/7"),
            ("..", "albums/%2E%2E/pictures/7"),
            ("50% off", "albums/50%25%20off/pictures/7"),
            ("ü", "albums/%C3%BC/pictures/7"),
        ]
        for (album, path) in cases {
            #expect(try client.prepare(AlbumPicture(album: album, pictureID: 7)).url == "https://api.test/v1/" + path)
        }
    }

    @Test func pathTemplateProblemsAreInvalidPaths() async {
        struct Missing: Endpoint {
            typealias Response = Data
            @Path var id: Int
            var path: String { "items/{id}/{other}" }
        }
        struct Unused: Endpoint {
            typealias Response = Data
            @Path var id: Int
            var path: String { "items" }
        }
        #expect(throws: CurlewError.self) { try client.prepare(Missing(id: 1)) }
        let error = #expect(throws: CurlewError.self) { try client.prepare(Unused(id: 1)) }
        #expect(error?.code == .invalidPath)
        #expect(error?.message == "@Path id has no {id} placeholder in the path")
        let empty = #expect(throws: CurlewError.self) { try client.prepare(AlbumPicture(album: "", pictureID: 1)) }
        #expect(empty?.code == .invalidPath)
    }

    @Test func formBodyWithQueryOnPost() throws {
        let prepared = try client.prepare(NewPictureForm(title: "Dunes at dusk", tags: ["sand", "sun"], dryRun: true))
        #expect(prepared.url == "https://api.test/v1/pictures?dry_run=true")
        #expect(prepared.body == Data("tags=sand&tags=sun&title=Dunes+at+dusk".utf8))
        #expect(prepared.headers[.contentType] == "application/x-www-form-urlencoded")
    }

    @Test func jsonBodyWithSortedKeysAndNestedValues() throws {
        let request = NewPictureForm(
            title: "Dunes", tags: ["sand"], note: nil, encoding: .json,
            extra: ["size": ["w": 800, "h": 600], "ratio": 1.5, "public": true, "owner": nil])
        let prepared = try client.prepare(request)
        #expect(
            String(decoding: prepared.body ?? Data(), as: UTF8.self)
                == #"{"public":true,"ratio":1.5,"size":{"h":600,"w":800},"tags":["sand"],"title":"Dunes"}"#)
        #expect(prepared.headers[.contentType] == "application/json")
        var withNull = request
        withNull.encodingOptions.nilStyle = .bareName
        withNull.note = nil
        #expect(
            String(decoding: try client.prepare(withNull).body ?? Data(), as: UTF8.self)
                == #"{"note":null,"owner":null,"public":true,"ratio":1.5,"size":{"h":600,"w":800},"tags":["sand"],"title":"Dunes"}"#)
    }

    @Test func aDeclaredFieldWinsOverTheDictionaryEntryOfTheSameName() throws {
        let prepared = try client.prepare(NewPictureForm(title: "Declared", tags: ["a"], extra: ["title": "From the dictionary", "album": "7"]))
        #expect(prepared.body == Data("album=7&tags=a&title=Declared".utf8))
    }

    @Test func fieldsGoToTheQueryWhenAsked() throws {
        let prepared = try client.prepare(NewPictureForm(title: "x", tags: [], encoding: .query))
        #expect(prepared.url == "https://api.test/v1/pictures?dry_run=false&title=x")
        #expect(prepared.body == nil)
    }

    @Test func arrayStyles() throws {
        let values: [String: ParameterValue] = ["a": [1, 2], "b": "x"]
        func url(_ style: ParameterEncodingOptions.ArrayStyle) throws -> String {
            try client.prepare(DictionaryOnly(values: values, parameterEncodingOptions: .init(arrayStyle: style))).url
        }
        #expect(try url(.repeated) == "https://api.test/v1/list?a=1&a=2&b=x")
        #expect(try url(.brackets) == "https://api.test/v1/list?a%5B%5D=1&a%5B%5D=2&b=x")
        #expect(try url(.indexed) == "https://api.test/v1/list?a%5B0%5D=1&a%5B1%5D=2&b=x")
        #expect(try url(.commaSeparated) == "https://api.test/v1/list?a=1%2C2&b=x")
    }

    @Test func boolDateNilAndOrderOptions() throws {
        let date = Date(timeIntervalSince1970: 1_714_564_800)
        let values: [String: ParameterValue] = ["z": true, "d": .date(date), "n": nil, "m": ["y": 1, "x": 2]]
        func url(_ options: ParameterEncodingOptions) throws -> String {
            try client.prepare(DictionaryOnly(values: values, parameterEncodingOptions: options)).url
        }
        #expect(try url(.default) == "https://api.test/v1/list?d=2024-05-01T12%3A00%3A00Z&m%5Bx%5D=2&m%5By%5D=1&z=true")
        #expect(
            try url(.init(boolStyle: .numeric, dateStyle: .secondsSince1970, nilStyle: .bareName))
                == "https://api.test/v1/list?d=1714564800&m%5Bx%5D=2&m%5By%5D=1&n&z=1")
        #expect(
            try url(.init(dateStyle: .millisecondsSince1970, nilStyle: .emptyValue))
                == "https://api.test/v1/list?d=1714564800000&m%5Bx%5D=2&m%5By%5D=1&n=&z=true")
        #expect(try url(.init(dateStyle: .custom { _ in "yesterday" })).hasPrefix("https://api.test/v1/list?d=yesterday&"))
    }

    @Test func unsortedKeysKeepDeclarationOrder() throws {
        struct Ordered: Endpoint {
            typealias Response = Data
            @Query var zeta = 1
            @Query var alpha = 2
            var path: String { "o" }
            var parameterEncodingOptions: ParameterEncodingOptions { .init(sortedKeys: false) }
        }
        #expect(try client.prepare(Ordered()).url == "https://api.test/v1/o?zeta=1&alpha=2")
    }

    @Test func enumsAndOtherConvertibles() throws {
        struct Listing: Endpoint {
            typealias Response = Data
            @Query var sort: Sort
            @Query var id: UUID
            @Query var ratio: Double
            var path: String { "l" }
        }
        let id = UUID(uuidString: "7B3C0C5E-0A4F-4D4E-9C55-0C2C8E0B9A11") ?? UUID()
        #expect(
            try client.prepare(Listing(sort: .popular, id: id, ratio: 0.25)).url
                == "https://api.test/v1/l?id=7B3C0C5E-0A4F-4D4E-9C55-0C2C8E0B9A11&ratio=0.25&sort=popular")
    }

    @Test func bodyAndBodyParametersConflict() async {
        struct Both: Endpoint {
            typealias Response = Data
            @Field var a = 1
            var method: HTTPRequest.Method { .post }
            var path: String { "x" }
            var body: RequestPayload? { .text("hi") }
        }
        let error = #expect(throws: CurlewError.self) { try client.prepare(Both()) }
        #expect(error?.code == .encodingFailed)
    }

    @Test func nonFiniteNumbersCannotBeJSON() {
        let error = #expect(throws: CurlewError.self) {
            try client.prepare(NewPictureForm(title: "x", tags: [], encoding: .json, extra: ["r": .double(.nan)]))
        }
        #expect(error?.code == .encodingFailed)
    }

    @Test func aDateWithoutAMillisecondCountIsAnEncodingError() throws {
        let far = Date(timeIntervalSince1970: 1e300)
        let options = ParameterEncodingOptions(dateStyle: .millisecondsSince1970)
        let query = #expect(throws: CurlewError.self) { try client.prepare(DictionaryOnly(values: ["d": .date(far)], parameterEncodingOptions: options)) }
        #expect(query?.code == .encodingFailed)
        let json = #expect(throws: CurlewError.self) {
            try client.prepare(NewPictureForm(title: "x", tags: [], encoding: .json, encodingOptions: options, extra: ["d": .date(far)]))
        }
        #expect(json?.code == .encodingFailed)
        let fine = try client.prepare(DictionaryOnly(values: ["d": .date(Date(timeIntervalSince1970: 1.5))], parameterEncodingOptions: options))
        #expect(fine.url.hasSuffix("?d=1500"))
    }

    @Test func headerInjectionThroughADeclaredHeaderIsRejected() {
        let error = #expect(throws: CurlewError.self) { try client.prepare(DeclaredSearch(searchKey: "k", token: "a\r\nX-Evil: 1")) }
        #expect(error?.code == .invalidHeader)
    }

    @Test func headerInjectionThroughABodysContentTypeIsRejected() throws {
        struct Upload: Endpoint {
            typealias Response = Data
            var contentType: String
            var method: HTTPRequest.Method { .post }
            var path: String { "upload" }
            var body: RequestPayload? { .data(Data("x".utf8), contentType: contentType) }
        }
        for injected in ["text/plain\r\nX-Evil: 1", "text/plain\nX-Evil: 1", "text/\u{0}plain"] {
            let error = #expect(throws: CurlewError.self) { try client.prepare(Upload(contentType: injected)) }
            #expect(error?.code == .invalidHeader)
            #expect(error?.message == "the body's content type contains CR, LF, NUL or another control character")
        }
        #expect(try client.prepare(Upload(contentType: "text/plain; charset=utf-8")).headers[.contentType] == "text/plain; charset=utf-8")
    }
}

@Suite("Parameters on the wire")
struct ParameterWireTests {
    @Test func aNilHeaderFollowsTheNilStyle() async throws {
        struct Tagged: Endpoint {
            typealias Response = Data
            @Header("X-Tag") var tag: String? = nil
            var nilStyle: ParameterEncodingOptions.NilStyle
            var path: String { "tagged" }
            var parameterEncodingOptions: ParameterEncodingOptions { ParameterEncodingOptions(nilStyle: nilStyle) }
        }
        try await withLoopback(handler: { _ in .text("ok") }) { server, client, _ in
            for style in [ParameterEncodingOptions.NilStyle.omit, .bareName, .emptyValue] {
                _ = try await client.send(Tagged(nilStyle: style))
            }
            #expect(server.requests.map { $0.header("X-Tag") } == [nil, "", ""])
        }
    }

    @Test func theServerReceivesTheExactWireForm() async throws {
        try await withLoopback(handler: { _ in .text("ok") }) { server, client, _ in
            _ = try await client.send(DeclaredSearch(searchKey: "sun set/ü", page: 3, token: "abc"))
            _ = try await client.send(AlbumPicture(album: "../etc/passwd?x", pictureID: 9))
            _ = try await client.send(NewPictureForm(title: "Dunes & more", tags: ["a", "b"], dryRun: true))
            _ = try await client.send(NewPictureForm(title: "J", tags: ["x"], encoding: .json, extra: ["n": 1]))
            _ = try await client.send(DictionaryOnly(values: ["t": ["p", "q"]], parameterEncodingOptions: .init(arrayStyle: .brackets)))

            let requests = server.requests
            #expect(requests.count == 5)
            #expect(requests[0].uri == "/pictures/search?key=sun%20set%2F%C3%BC&page=3")
            #expect(requests[0].header("X-Token") == "abc")
            #expect(requests[0].queryValue("key") == "sun set/ü")
            #expect(requests[1].uri == "/albums/..%2Fetc%2Fpasswd%3Fx/pictures/9")
            #expect(requests[2].method == "POST")
            #expect(requests[2].uri == "/pictures?dry_run=true")
            #expect(requests[2].bodyText == "tags=a&tags=b&title=Dunes+%26+more")
            #expect(requests[2].header("Content-Type") == "application/x-www-form-urlencoded")
            #expect(requests[3].bodyText == #"{"n":1,"tags":["x"],"title":"J"}"#)
            #expect(requests[3].header("Content-Type") == "application/json")
            #expect(requests[4].uri == "/list?t%5B%5D=p&t%5B%5D=q")
        }
    }
}
