// A Hummingbird server file that also uses Curlew: both modules imported, every name written
// unqualified, except the one name both modules declare (`CallID`, see below).
// The README's examples are compiled beside this file (ReadmeExamples.generated.swift, written by
// scripts/readme-examples.py), with `import Hummingbird` added to them.
import Curlew
import CurlewTesting
import Foundation
import HTTPTypes
import Hummingbird
import Testing

/// The server side's own endpoint types. They sit in a namespace only because the generated README
/// file declares `SearchRequest` at module scope in this same target.
enum Upstream {
    struct SearchResults: Decodable, Sendable, ValidatableModel {
        var total: Int
        var titles: [String]

        func validate() throws {
            if total < 0 { throw ValidationFailure("total must not be negative") }
        }
    }

    /// `GET /pictures/search?key=…` on the upstream API.
    struct SearchRequest: Endpoint {
        typealias Response = SearchResults
        var key: String

        var path: String { "pictures/search" }
        var query: [URLQueryItem] { [URLQueryItem(name: "key", value: key)] }
    }

    /// A POST with a body, to use `RequestPayload` unqualified.
    struct TagRequest: Endpoint {
        typealias Response = EmptyResponse
        var tag: String

        var method: HTTPRequest.Method { .post }
        var path: String { "tags" }
        var body: RequestPayload? { .json(["tag": tag]) }
    }

    /// A client middleware (Hummingbird's own protocol is `RouterMiddleware`/`MiddlewareProtocol`).
    struct ForwardedFor: APIMiddleware {
        var address: String

        func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
            var request = request
            request.headers[HTTPField.Name("X-Forwarded-For")!] = address
            return try await next(request, context)
        }
    }
}

/// A client whose transport answers in-process, so the test needs no network.
func makeUpstreamClient() -> (APIClient, MockTransport) {
    let transport = MockTransport { request in
        .json(#"{"total":2,"titles":["dunes","fog"]}"#, for: request)
    }
    let client = APIClient(
        configuration: ClientConfiguration(
            baseURL: "https://gallery.example.com/api",
            middleware: [Upstream.ForwardedFor(address: "127.0.0.1")]),
        transport: transport)
    return (client, transport)
}

/// A Hummingbird router whose routes call the upstream API through Curlew.
func makeRouter(client: APIClient) -> Router<BasicRequestContext> {
    let router = Router()
    router.get("search") { (request: Request, context: BasicRequestContext) -> String in
        let key = request.uri.queryParameters.get("key") ?? "sunset"
        let results = try await client.send(Upstream.SearchRequest(key: key))
        return results.titles.joined(separator: ",")
    }
    router.get("search/raw") { (_: Request, _: BasicRequestContext) -> Response in
        let upstream: APIResponse<Upstream.SearchResults> = try await client.response(for: Upstream.SearchRequest(key: "fog"))
        return Response(status: .ok, headers: [.contentType: "text/plain"],
                        body: ResponseBody(byteBuffer: ByteBuffer(string: "\(upstream.value.total)")))
    }
    router.post("tags/:tag") { (_: Request, context: BasicRequestContext) -> HTTPResponse.Status in
        _ = try await client.send(Upstream.TagRequest(tag: context.parameters.get("tag") ?? ""))
        return .created
    }
    return router
}

@Suite struct ServerNamesTests {
    @Test func curlewAndHummingbirdLiveTogether() async throws {
        let (client, transport) = makeUpstreamClient()
        let router = makeRouter(client: client)
        let app = Application(
            router: router,
            configuration: ApplicationConfiguration(address: .hostname("127.0.0.1", port: 0)))
        _ = app   // constructed, never run: no server is started

        // The endpoint works through the client (the same call the route makes).
        let results = try await client.send(Upstream.SearchRequest(key: "dunes"))
        #expect(results.titles == ["dunes", "fog"])
        #expect(transport.requests.count == 1)
        #expect(transport.requests.first?.headers[HTTPField.Name("X-Forwarded-For")!] == "127.0.0.1")
    }

    /// Hummingbird's `RequestID` (a server request's id) and Curlew's `CallID` (a client call's
    /// id) live side by side, unqualified.
    @Test func serverAndClientIdsAreDistinctNames() {
        let server = RequestID()
        let call = CallID.next()
        #expect(!server.description.isEmpty)
        #expect(call.rawValue > 0)
    }
}
