@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import TestSupport
import Testing

/// Redirects as Transport and streaming documents them, followed against httpbin (which echoes
/// the method, body and headers it finally received). These tests fail, not skip, without
/// `CURLEW_HTTPBIN_URL`.
@Suite("Redirects against httpbin", .timeLimit(.minutes(1)))
struct HTTPBinRedirectTests {
    struct Echo: Decodable {
        var url: String
        var method: String?  // `/anything` only
        var data: String?
        var headers: [String: String]
    }

    struct Call: Endpoint {
        typealias Response = Echo
        var path: String
        var method: HTTPRequest.Method = .get
        var query: [URLQueryItem] = []
        var body: RequestPayload? = nil
    }

    /// `/redirect/N` (relative), `/absolute-redirect/N` and `/relative-redirect/N` end at `/get`,
    /// and the metrics count every hop.
    @Test(arguments: ["redirect/3", "absolute-redirect/3", "relative-redirect/3"])
    func chainsOfRedirectsEndAtTheTargetAndAreCounted(path: String) async throws {
        let root = try TestServers.httpbin()
        let client = APIClient(baseURL: root, transport: CurlTransport.shared)
        let response = try await client.response(for: Call(path: path))
        #expect(response.status == .ok)
        #expect(response.value.url == root + "/get")
        #expect(response.raw.url == root + "/get")
        #expect(response.metrics?.redirectCount == 3)
    }

    /// RFC 9110's table: a `POST` answered `301`/`302`/`303` becomes a `GET` without its body and
    /// its content headers; `307`/`308` keep the method and the body.
    @Test(arguments: [301, 302, 303, 307, 308])
    func aPostFollowsTheStatusRules(status: Int) async throws {
        let client = APIClient(baseURL: try TestServers.httpbin(), transport: CurlTransport.shared)
        let call = Call(
            path: "redirect-to", method: .post,
            query: [URLQueryItem(name: "url", value: "/anything"), URLQueryItem(name: "status_code", value: "\(status)")],
            body: .json(["k": "v"]))
        let echo = try await client.send(call)
        if status >= 307 {
            #expect(echo.method == "POST")
            #expect(echo.data == #"{"k":"v"}"#)
            #expect(echo.headers["Content-Type"] == "application/json")
        } else {
            #expect(echo.method == "GET")
            #expect(echo.data == "")
            #expect(echo.headers["Content-Type"] == nil)
        }
    }

    /// One hop over the limit fails with `.tooManyRedirects` at the transport stage, carrying the
    /// redirect it refused to follow.
    @Test func overTheLimitIsTooManyRedirectsWithTheRefusedHop() async throws {
        let root = try TestServers.httpbin()
        var options = TransferOptions()
        options.redirectLimit = 2
        let client = APIClient(configuration: ClientConfiguration(baseURL: root, transferOptions: options), transport: CurlTransport.shared)
        let error = try await #require(throws: CurlewError.self) { try await client.send(Call(path: "redirect/3")) }
        #expect(error.code == .tooManyRedirects)
        #expect(error.stage == .transport)
        #expect(error.status == .found)
        #expect(error.headers?[.location] == "/get")
        #expect(error.request?.redactedURL == root + "/redirect/3")
        #expect(error.description == "tooManyRedirects: more than 2 redirects (GET \(root)/redirect/3) at transport [HTTP 302]")
    }

    /// A redirect to a scheme other than http(s) is refused at the transport stage, with the 3xx.
    @Test func aRedirectToAnotherSchemeIsRefused() async throws {
        let client = APIClient(baseURL: try TestServers.httpbin(), transport: CurlTransport.shared)
        let call = Call(path: "redirect-to", query: [URLQueryItem(name: "url", value: "ftp://127.0.0.1/file")])
        let error = try await #require(throws: CurlewError.self) { try await client.send(call) }
        #expect(error.code == .redirectRefused)
        #expect(error.stage == .transport)
        #expect(error.status == .found)
        #expect(error.headers?[.location] == "ftp://127.0.0.1/file")
    }
}
