import Curlew
import CurlewTesting
import Foundation
import HTTPTypes
import Testing

/// A request whose every part is set from the outside, for validation tests.
struct ConfigurableRequest: Endpoint {
    typealias Response = Data
    var method: HTTPRequest.Method = .get
    var path: String
    var query: [URLQueryItem] = []
    var headers: [String: String] = [:]
    var body: RequestPayload? = nil
}

@Suite("Preparing requests")
struct PrepareTests {
    let transport = MockTransport { .text("ok", for: $0) }
    var client: APIClient { APIClient(baseURL: "https://api.test/v1/", transport: transport) }

    @Test func joinsBaseURLPathAndEncodedQuery() throws {
        let prepared = try client.prepare(
            ConfigurableRequest(
                path: "/pictures/search",
                query: [URLQueryItem(name: "key", value: "sun set&more"), URLQueryItem(name: "flag", value: nil)]))
        #expect(prepared.url == "https://api.test/v1/pictures/search?key=sun%20set%26more&flag")
    }

    @Test func appendsQueryItemsToAPathThatHasAQuery() throws {
        let prepared = try client.prepare(ConfigurableRequest(path: "items?page=2", query: [URLQueryItem(name: "size", value: "10")]))
        #expect(prepared.url == "https://api.test/v1/items?page=2&size=10")
    }

    @Test func encodesCharactersAPathMayNotContain() throws {
        let prepared = try client.prepare(ConfigurableRequest(path: "files/a b/ü"))
        #expect(prepared.url == "https://api.test/v1/files/a%20b/%C3%BC")
    }

    @Test func usesAbsoluteURLsAsTheyAre() throws {
        let prepared = try client.prepare(ConfigurableRequest(path: "http://other.test:8080/x?y=1"))
        #expect(prepared.url == "http://other.test:8080/x?y=1")
    }

    @Test func anAbsoluteURLWithAnIPv6HostKeepsItsBrackets() throws {
        let prepared = try client.prepare(ConfigurableRequest(path: "http://[::1]:8080/a b"))
        #expect(prepared.url == "http://[::1]:8080/a%20b")
    }

    /// A first segment with a colon is a path under the base URL (a resource's custom method),
    /// not a scheme: only `http`, `https` or a `scheme://` make a path absolute.
    @Test(arguments: [("documents:commit", "https://api.test/v1/documents:commit"), ("v1beta/models/m:generate?alt=sse", "https://api.test/v1/v1beta/models/m:generate?alt=sse")])
    func aColonInTheFirstSegmentIsARelativePath(path: String, url: String) throws {
        #expect(try client.prepare(ConfigurableRequest(path: path)).url == url)
    }

    @Test(arguments: ["file:///etc/passwd", "ftp://host/file", "gopher://host/"])
    func rejectsSchemesOtherThanHTTP(url: String) async {
        await expectRejected(ConfigurableRequest(path: url), code: .unsupportedScheme)
    }

    @Test func rejectsRelativePathWithoutBaseURL() async {
        let client = APIClient(configuration: ClientConfiguration(), transport: transport)
        let error = await #expect(throws: CurlewError.self) { try await client.send(ConfigurableRequest(path: "relative")) }
        #expect(error?.code == .malformedURL)
        #expect(transport.requests.isEmpty)
    }

    @Test(arguments: ["a\r\nX-Injected: 1", "a\nb", "a\0b", "\r"])
    func rejectsControlCharactersInThePath(path: String) async {
        await expectRejected(ConfigurableRequest(path: path), code: .invalidPath)
    }

    @Test(arguments: ["value\r\nX-Injected: yes", "value\nmore", "nul\0byte"])
    func rejectsHeaderValueInjection(value: String) async {
        let error = await expectRejected(ConfigurableRequest(path: "x", headers: ["X-Trace": value]), code: .invalidHeader)
        #expect(error?.description.contains("X-Injected") == false)
        #expect(error?.description.contains("nul") == false)
    }

    @Test(arguments: ["X-Bad\r\nName", "Bad Name", "", "Naïve"])
    func rejectsInvalidHeaderNames(name: String) async {
        await expectRejected(ConfigurableRequest(path: "x", headers: [name: "v"]), code: .invalidHeader)
    }

    @Test func methodsMustBeTokens() {
        #expect(HTTPRequest.Method("GET\r\n") == nil)
        #expect(HTTPRequest.Method("PATCH") != nil)
    }

    @Test func requestHeadersOverrideClientDefaults() throws {
        let client = APIClient(
            configuration: ClientConfiguration(baseURL: "https://api.test", headers: [.userAgent: "Curlew", .accept: "text/plain"]),
            transport: transport)
        let prepared = try client.prepare(ConfigurableRequest(path: "x", headers: ["Accept": "application/json", "X-Trace": "t1"]))
        #expect(prepared.headers[.accept] == "application/json")
        #expect(prepared.headers[.userAgent] == "Curlew")
        #expect(prepared.headers[HTTPField.Name("X-Trace")!] == "t1")
    }

    @Test func encodesBodiesWithTheirContentTypes() throws {
        struct Payload: Encodable, Sendable { var name: String }
        let json = try client.prepare(ConfigurableRequest(method: .post, path: "x", body: .json(Payload(name: "a"))))
        #expect(json.body == Data(#"{"name":"a"}"#.utf8))
        #expect(json.headers[.contentType] == "application/json")

        let form = try client.prepare(ConfigurableRequest(method: .post, path: "x", body: .form(["b": "x y", "a": "1&2=3"])))
        #expect(form.body == Data("a=1%262%3D3&b=x+y".utf8))
        #expect(form.headers[.contentType] == "application/x-www-form-urlencoded")

        let raw = try client.prepare(ConfigurableRequest(method: .put, path: "x", headers: ["Content-Type": "image/png"], body: .data(Data([1, 2]))))
        #expect(raw.body == Data([1, 2]))
        #expect(raw.headers[.contentType] == "image/png")
    }

    @Test func encodingFailureIsAnInvalidRequest() async {
        struct Unencodable: Encodable, Sendable {
            func encode(to encoder: any Encoder) throws {
                throw EncodingError.invalidValue(0, .init(codingPath: [], debugDescription: "no"))
            }
        }
        await expectRejected(ConfigurableRequest(method: .post, path: "x", body: .json(Unencodable())), code: .encodingFailed)
    }

    @Test func descriptionsRedactSecretQueryValuesAndOmitHeaderValues() async {
        let transport = MockTransport { .text("nope", status: .unauthorized, for: $0) }
        let client = APIClient(baseURL: "https://api.test", transport: transport)
        let request = ConfigurableRequest(
            path: "me",
            query: [URLQueryItem(name: "access_token", value: "s3cr3t"), URLQueryItem(name: "page", value: "2")],
            headers: ["Authorization": "Bearer hunter2"])
        let error = await #expect(throws: CurlewError.self) { try await client.send(request) }
        let text = error.map { "\($0) \(String(reflecting: $0))" } ?? ""
        #expect(text.contains("GET https://api.test/me?access_token=<redacted>&page=2"))
        #expect(!text.contains("s3cr3t"))
        #expect(!text.contains("hunter2"))
        #expect(error?.status == .unauthorized)
    }

    @Test func userInfoInURLsIsRedacted() {
        let summary = RequestSummary(method: .get, url: "https://user:pa55@api.test/x?password=p")
        #expect(summary.description == "GET https://<redacted>@api.test/x?password=<redacted>")
    }

    @discardableResult
    private func expectRejected(_ request: ConfigurableRequest, code: CurlewError.Code) async -> CurlewError? {
        let error = await #expect(throws: CurlewError.self) { try await client.send(request) }
        #expect(error?.code == code)
        #expect(error?.level == .invalidRequest)
        #expect(transport.requests.isEmpty, "nothing may reach the transport")
        return error
    }
}
