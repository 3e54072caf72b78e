@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import TestSupport
import Testing

/// The errors a newcomer meets first, against httpbin: an answer that is not JSON decoded as
/// JSON, and an error status with a body. These tests fail, not skip, without `CURLEW_HTTPBIN_URL`.
@Suite("Errors against httpbin", .timeLimit(.minutes(1)))
struct HTTPBinErrorTests {
    private func client() throws -> APIClient {
        let url = try #require(
            TestServers.environment["CURLEW_HTTPBIN_URL"],
            "CURLEW_HTTPBIN_URL is not set: run scripts/test.sh, which starts httpbin (scripts/httpbin.sh)")
        return APIClient(baseURL: url, transport: CurlTransport.shared)
    }

    struct Slideshow: Decodable, Sendable { var slideshow: [String: String] }

    struct Get<Model: Decodable & Sendable>: Endpoint {
        typealias Response = Model
        var path: String
    }

    private func decodingError<R: Decodable & Sendable>(_ path: String, as type: R.Type) async throws -> CurlewError {
        let client = try client()
        do {
            _ = try await client.send(Get<R>(path: path))
        } catch let error as CurlewError {
            return error
        }
        Issue.record("\(path) decoded as \(R.self)")
        return CurlewError(code: .middlewareFailed, message: "no error")
    }

    /// A `204` (no body) decoded as a model says the body was empty, not "not valid JSON".
    @Test func anEmptyAnswerDecodedAsJSONSaysTheBodyIsEmpty() async throws {
        let error = try await decodingError("status/204", as: Slideshow.self)
        #expect(error.code == .decodingFailed)
        #expect(error.stage == .decoding)
        #expect(error.status == .noContent)
        #expect(error.message == "<root>: expected JSON, found an empty body")
        #expect(error.dataPath == "")
    }

    /// An HTML page decoded as a model names what came instead, and the page is in the snippet.
    @Test func anHTMLAnswerDecodedAsJSONNamesItsContentType() async throws {
        let error = try await decodingError("html", as: Slideshow.self)
        #expect(error.code == .decodingFailed)
        #expect(error.message == "<root>: expected JSON, found a body that is not JSON (Content-Type text/html)")
        #expect(error.bodySnippet?.hasPrefix("<!DOCTYPE html>") == true)
    }

    /// JSON of another shape still gets the path and what was found there.
    @Test func jsonOfAnotherShapeNamesThePathAndWhatWasFound() async throws {
        let error = try await decodingError("json", as: [Int].self)
        #expect(error.message == "<root>: expected array, found object")
        let inner = try await decodingError("json", as: Slideshow.self)
        #expect(inner.message == "slideshow.slides: expected String, found array")
        #expect(inner.dataPath == "slideshow.slides")
    }

    /// An error status keeps the body the server sent: whole in `responseBody`, as text in
    /// `bodySnippet`.
    @Test func anErrorStatusKeepsItsBody() async throws {
        let client = try client()
        let error = try await #require(throws: CurlewError.self) { try await client.send(Get<Slideshow>(path: "status/418")) }
        #expect(error.code == .unacceptableStatus)
        #expect(error.level == .httpStatus)
        #expect(error.status?.code == 418)
        let body = String(decoding: try #require(error.responseBody), as: UTF8.self)
        #expect(body.contains("-=[ teapot ]=-"))
        #expect(error.bodySnippet == body)
        #expect(error.headers?[.init("x-more-info")!] == "http://tools.ietf.org/html/rfc2324")
    }
}
