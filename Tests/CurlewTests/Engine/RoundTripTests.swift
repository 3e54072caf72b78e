import Curlew
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

struct PictureDetails: Codable, Sendable, Equatable {
    var id: Int
    var title: String
    var tags: [String]
}

struct GetPicture: Endpoint {
    typealias Response = PictureDetails
    var id: Int
    var path: String { "pictures/\(id)" }
    var headers: [String: String] { ["X-Trace-ID": "trace-\(id)"] }
}

struct CreatePicture: Endpoint {
    typealias Response = PictureDetails
    var picture: PictureDetails
    var method: HTTPRequest.Method { .post }
    var path: String { "pictures" }
    var body: RequestPayload? { .json(picture) }
}

@Suite("Round trips against a loopback server")
struct RoundTripTests {
    static let echo: @Sendable (ServerRequest) async -> ServerResponse = { request in
        .text(request.bodyText)
    }

    @Test func jsonGetRoundTrip() async throws {
        var router = LoopbackRouter()
        router.on("GET", "/pictures/{id}") { _, parameters in
            .json(#"{"id":\#(parameters["id"] ?? "0"),"title":"Dunes","tags":["sand","sun"]}"#)
        }
        try await withLoopback(router: router) { server, client, _ in
            let picture = try await client.send(GetPicture(id: 7))
            #expect(picture == PictureDetails(id: 7, title: "Dunes", tags: ["sand", "sun"]))
            let seen = try #require(server.requests.first)
            #expect(seen.method == "GET")
            #expect(seen.uri == "/pictures/7")
            #expect(seen.header("X-Trace-ID") == "trace-7")
            #expect(seen.header("User-Agent") == "Curlew")
            #expect(seen.body.isEmpty)
        }
    }

    @Test func jsonPostRoundTrip() async throws {
        try await withLoopback(handler: Self.echo) { server, client, _ in
            let sent = PictureDetails(id: 3, title: "Tide \"pool\"", tags: ["ü"])
            let echoed = try await client.send(CreatePicture(picture: sent))
            #expect(echoed == sent)
            let seen = try #require(server.requests.first)
            #expect(seen.method == "POST")
            #expect(seen.header("Content-Type") == "application/json")
            #expect(seen.header("Content-Length") == String(seen.body.count))
            #expect(seen.header("Expect") == nil)
            #expect(try JSONDecoder().decode(PictureDetails.self, from: Data(seen.body)) == sent)
        }
    }

    @Test func queryFormAndJSONBodiesArriveExactly() async throws {
        try await withLoopback(handler: Self.echo) { server, client, _ in
            _ = try await client.send(
                Send(
                    path: "search",
                    query: [URLQueryItem(name: "key", value: "sun set/ü"), URLQueryItem(name: "page", value: "2")]))
            _ = try await client.send(Send(method: .post, path: "login", body: .form(["user": "ana maria", "pass": "a&b=c"])))
            _ = try await client.send(Send(method: .put, path: "raw", body: .data(Data([0, 1, 2, 255]), contentType: "application/x-bytes")))
            let seen = server.requests
            #expect(seen.count == 3)
            #expect(seen[0].uri == "/search?key=sun%20set%2F%C3%BC&page=2")
            #expect(seen[1].method == "POST")
            #expect(seen[1].bodyText == "pass=a%26b%3Dc&user=ana+maria")
            #expect(seen[1].header("Content-Type") == "application/x-www-form-urlencoded")
            #expect(seen[2].method == "PUT")
            #expect(seen[2].body == [0, 1, 2, 255])
            #expect(seen[2].header("Content-Type") == "application/x-bytes")
        }
    }

    @Test func methodsWithAndWithoutBodies() async throws {
        try await withLoopback(handler: Self.echo) { server, client, _ in
            _ = try await client.send(Send(method: .delete, path: "a"))
            _ = try await client.send(Send(method: .patch, path: "b", body: .text("patch me")))
            _ = try await client.send(Send(method: .post, path: "c"))
            let response = try await client.response(for: Send(method: .head, path: "d"))
            #expect(response.status == .ok)
            let seen = server.requests
            #expect(seen.map(\.method) == ["DELETE", "PATCH", "POST", "HEAD"])
            #expect(seen[1].bodyText == "patch me")
            #expect(seen[2].header("Content-Length") == "0")
            #expect(seen[2].header("Content-Type") == nil)
        }
    }

    @Test func customHeadersArriveAndResponseHeadersAreParsed() async throws {
        try await withLoopback(handler: { _ in
            ServerResponse(status: 201, headers: [(name: "X-Answer", value: "42"), (name: "Set-Cookie", value: "a=1"), (name: "Set-Cookie", value: "b=2")], body: Array("made".utf8))
        }) { server, client, _ in
            let response = try await client.response(for: Send(path: "h", headers: ["X-One": "1", "Accept": "text/plain"]))
            #expect(response.status == .created)
            #expect(response.value == "made")
            #expect(response.headers[HTTPField.Name("X-Answer")!] == "42")
            #expect(response.headers[values: .setCookie] == ["a=1", "b=2"])
            #expect(response.source == .network)
            let seen = try #require(server.requests.first)
            #expect(seen.header("X-One") == "1")
            #expect(seen.headerValues("Accept") == ["text/plain"])
        }
    }

    @Test func nonSuccessStatusBecomesAnErrorWithSnippet() async throws {
        try await withLoopback(handler: { _ in .json(#"{"error":"gone fishing"}"#, status: 503) }) { _, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.send(GetPicture(id: 1)) }
            #expect(error?.code == .unacceptableStatus)
            #expect(error?.status?.code == 503)
            #expect(error?.bodySnippet == #"{"error":"gone fishing"}"#)
            #expect(error?.request?.description.hasSuffix("/pictures/1") == true)
        }
    }

    @Test func decodeFailureReportsThePath() async throws {
        try await withLoopback(handler: { _ in .json(#"{"id":1,"title":"x","tags":["a",2]}"#) }) { _, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.send(GetPicture(id: 1)) }
            #expect(error?.message == "tags[1]: expected String, found number")
            #expect(error?.dataPath == "tags[1]")
        }
    }

    @Test func largeBodiesArriveIntact() async throws {
        let size = 6 * 1024 * 1024
        let payload = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        try await withLoopback(handler: { _ in ServerResponse(status: 200, body: payload) }) { _, client, _ in
            let received = try await client.send(FetchBytes(path: "big"))
            #expect(received.count == size)
            #expect(received == Data(payload))
        }
    }

    @Test func headerInjectionSendsNothing() async throws {
        try await withLoopback(handler: Self.echo) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) {
                try await client.send(Send(path: "x", headers: ["X-Evil": "1\r\nX-Injected: 2"]))
            }
            #expect(error?.code == .invalidHeader)
            let pathError = await #expect(throws: CurlewError.self) {
                try await client.send(Send(path: "x HTTP/1.1\r\nHost: evil"))
            }
            #expect(pathError?.code == .invalidPath)
            try await Task.sleep(for: .milliseconds(50))
            #expect(server.requestCount == 0)
            #expect(server.connectionsAccepted == 0)
        }
    }
}

struct FetchBytes: Endpoint {
    typealias Response = Data
    var path: String
}
