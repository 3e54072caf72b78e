import Curlew
import Foundation
import HTTPTypes
import Testing

/// What goes on the wire for empty values and for fields swift-http-types splits.
@Suite("Request header lines")
struct HeaderWritingTests {
    @Test func anEmptyValueIsSentNotDropped() async throws {
        let server = try ScriptedServer { _, _ in .ok() }
        defer { server.stop() }
        try await withTransport { transport in
            var request = PreparedRequest(method: .get, url: server.baseURL + "/e", options: http1Options())
            request.headers[HTTPField.Name("X-Empty")!] = ""
            request.headers[HTTPField.Name("X-Full")!] = "v"
            _ = try await transport.send(request)
            let seen = try #require(server.requests.first)
            #expect(seen.headerLines.filter { $0.lowercased().hasPrefix("x-empty") } == ["X-Empty:"])
            #expect(seen.values("X-Empty") == [""])
            #expect(seen.values("X-Full") == ["v"])
        }
    }

    @Test func cookiesGoOutAsOneLineJoinedWithSemicolons() async throws {
        let server = try ScriptedServer { _, _ in .ok() }
        defer { server.stop() }
        try await withTransport { transport in
            var request = PreparedRequest(method: .get, url: server.baseURL + "/c", options: http1Options())
            request.headers[.cookie] = "a=1; b=2"
            request.headers.append(HTTPField(name: .cookie, value: "c=3"))
            #expect(request.headers[fields: .cookie].count == 3, "swift-http-types splits cookie fields")
            _ = try await transport.send(request)
            let seen = try #require(server.requests.first)
            #expect(seen.values("Cookie") == ["a=1; b=2; c=3"])
        }
    }

    @Test func otherRepeatedFieldsStayListsInOrder() async throws {
        let server = try ScriptedServer { _, _ in .ok() }
        defer { server.stop() }
        try await withTransport { transport in
            var request = PreparedRequest(method: .get, url: server.baseURL + "/l", options: http1Options())
            request.headers[.accept] = "text/plain, application/json"
            request.headers.append(HTTPField(name: HTTPField.Name("X-Multi")!, value: "1"))
            request.headers.append(HTTPField(name: HTTPField.Name("X-Multi")!, value: "2"))
            _ = try await transport.send(request)
            let seen = try #require(server.requests.first)
            #expect(seen.values("Accept") == ["text/plain, application/json"], "not split")
            #expect(seen.values("X-Multi") == ["1", "2"], "each field its own line, in order: a list the server joins with a comma")
        }
    }
}
