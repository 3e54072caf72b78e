import Curlew
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

/// Which `Content-Type` a body goes out with: the endpoint's own header beats the body's own
/// type, which beats the client's default headers; a body without a type of its own takes the
/// client's default, else `application/octet-stream`.
@Suite("Request bodies: content type and files")
struct BodyContentTypeTests {
    struct Upload: Endpoint {
        typealias Response = Data
        var payload: RequestPayload
        var ownContentType: String? = nil
        var method: HTTPRequest.Method { .post }
        var path: String { "upload" }
        var headers: [String: String] { ownContentType.map { ["Content-Type": $0] } ?? [:] }
        var body: RequestPayload? { payload }
    }

    struct Fields: Endpoint {
        typealias Response = Data
        @Field var a: Int = 1
        var method: HTTPRequest.Method { .post }
        var path: String { "fields" }
        var encoding: ParameterEncoding { .form }
    }

    struct Ratio: Endpoint {
        typealias Response = Data
        @Query var ratio: Float
        var path: String { "ratio" }
    }

    @Test func aMultipartFormKeepsItsBoundaryUnderAClientWideJSONContentType() async throws {
        var form = MultipartForm(boundary: "b0undary")
        form.append(field: "title", value: "Dunes")
        let seen = try await exchange(Upload(payload: .multipart(form)), defaults: [.contentType: "application/json"])
        #expect(seen.type == "multipart/form-data; boundary=b0undary")
        #expect(String(decoding: seen.body, as: UTF8.self).contains("name=\"title\""))
    }

    @Test func formFieldsAreLabelledAsAFormUnderAClientWideJSONContentType() async throws {
        let seen = try await exchange(Fields(), defaults: [.contentType: "application/json"])
        #expect(seen.type == "application/x-www-form-urlencoded")
        #expect(seen.body == Array("a=1".utf8))
    }

    @Test func bytesWithoutATypeTakeTheClientsDefaultElseOctetStream() async throws {
        let bytes = Data(#"{"a":1}"#.utf8)
        #expect(try await exchange(Upload(payload: .data(bytes)), defaults: [.contentType: "application/json"]).type == "application/json")
        #expect(try await exchange(Upload(payload: .data(bytes)), defaults: [:]).type == "application/octet-stream")
        #expect(try await exchange(Upload(payload: .data(bytes, contentType: "text/x-a")), defaults: [.contentType: "application/json"]).type == "text/x-a")
        let own = Upload(payload: .data(bytes, contentType: "text/x-a"), ownContentType: "application/vnd.own+json")
        #expect(try await exchange(own, defaults: [.contentType: "application/json"]).type == "application/vnd.own+json")
    }

    @Test func aFileUploadFollowsASymbolicLink() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("curlew-symlink-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let real = folder.appendingPathComponent("real.bin")
        let link = folder.appendingPathComponent("link.bin")
        try Data("linked bytes".utf8).write(to: real)
        try FileManager.default.createSymbolicLink(atPath: link.path, withDestinationPath: real.path)
        let seen = try await exchange(Upload(payload: .file(path: link.path)), defaults: [:])
        #expect(seen.body == Array("linked bytes".utf8))
        #expect(seen.type == "application/octet-stream")
    }

    @Test func aFloatQueryParameterIsSentAsItsShortestDecimal() async throws {
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL), transport: transport)
            _ = try await client.send(Ratio(ratio: 0.1))
            #expect(server.requests.last?.query == "ratio=0.1")
        }
    }

    /// Sends `request` on a client whose default headers are `defaults`; the content type and
    /// body the server saw.
    private func exchange(_ request: some Endpoint, defaults: HTTPFields) async throws -> (type: String?, body: [UInt8]) {
        var seen: (type: String?, body: [UInt8]) = (nil, [])
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            let client = APIClient(configuration: ClientConfiguration(baseURL: server.baseURL, headers: defaults), transport: transport)
            _ = try await client.send(request)
            let request = try #require(server.requests.last)
            seen = (request.header("Content-Type"), request.body)
        }
        return seen
    }
}
