import Curlew
import Foundation
import HTTPTypes
import Testing

/// Responses whose framing cannot be trusted fail with `.protocolError`, and the connection they
/// came on is not used again.
@Suite("Strict response framing")
struct FramingTests {
    /// Sends GET /first (a good answer on a kept-alive connection), GET /bad (`bad`), then
    /// GET /after; returns the error of /bad and the server.
    private func exchange(_ bad: ScriptedServer.Action) async throws -> (CurlewError?, ScriptedServer) {
        let server = try ScriptedServer { index, _ in index == 1 ? bad : .ok() }
        defer { server.stop() }
        let transport = CurlTransport()
        do {
            let failure = try await exchange(bad, server: server, transport: transport)
            await transport.shutdown()
            return (failure, server)
        } catch {
            await transport.shutdown()
            throw error
        }
    }

    private func exchange(_ bad: ScriptedServer.Action, server: ScriptedServer, transport: CurlTransport) async throws -> CurlewError? {
        var options = TransferOptions()
        options.httpVersion = .http1Only
        _ = try await transport.send(PreparedRequest(method: .get, url: server.baseURL + "/first", options: options))
        var failure: CurlewError?
        do {
            let response = try await transport.send(PreparedRequest(method: .get, url: server.baseURL + "/bad", options: options))
            Issue.record("expected a protocol error, got HTTP \(response.status.code) with \(response.body.count) bytes")
        } catch let error as CurlewError {
            failure = error
        }
        let after = try await transport.send(PreparedRequest(method: .get, url: server.baseURL + "/after", options: options))
        #expect(after.status.code == 200)
        return failure
    }

    private static func keepAlive(_ text: String) -> ScriptedServer.Action { .send(Data(text.utf8), close: false) }

    @Test(arguments: [
        ("head cut by close, no length", ScriptedServer.Action.raw("HTTP/1.1 200 OK\r\nX-A: b\r\n")),
        ("head cut by close, with length", .raw("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nX-A: b\r\n")),
        ("head cut mid-line", .raw("HTTP/1.1 200 OK\r\nX-A: b")),
        ("two Content-Length values", keepAlive("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\nhello12")),
        ("a Content-Length list", keepAlive("HTTP/1.1 200 OK\r\nContent-Length: 5, 7\r\n\r\nhello12")),
        ("a Content-Length that is no number", keepAlive("HTTP/1.1 200 OK\r\nContent-Length: five\r\n\r\nhello")),
        ("chunked not last", .raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n5\r\nhello\r\n0\r\n\r\n")),
        ("chunked not last, two lines", .raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: gzip\r\n\r\nhello")),
        ("gzip without chunked", .raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nhello")),
        ("gzip without chunked, behind a field that looks like a status line", .raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\nHTTP/1.1 200 x: y\r\n\r\nhello")),
        ("identity coding", .raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: identity\r\n\r\nhello")),
        ("chunked beside Content-Length", keepAlive("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n5\r\nhello\r\n0\r\n\r\n")),
        ("a malformed chunk", .raw("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\nhello\r\n0\r\n\r\n")),
        ("HTTP/0.9 garbage", .raw("garbage here\r\n\r\n")),
        ("status 99999", keepAlive("HTTP/1.1 99999 Weird\r\nContent-Length: 0\r\n\r\n")),
        ("status abc", keepAlive("HTTP/1.1 abc Weird\r\nContent-Length: 0\r\n\r\n")),
        ("status 099", keepAlive("HTTP/1.1 099 Low\r\nContent-Length: 0\r\n\r\n")),
        ("status 1000", keepAlive("HTTP/1.1 1000 High\r\nContent-Length: 0\r\n\r\n")),
    ])
    func brokenFramingIsAProtocolErrorAndTheConnectionIsNotReused(name: String, bad: ScriptedServer.Action) async throws {
        let (failure, server) = try await exchange(bad)
        #expect(failure?.code == .protocolError, "\(name): \(failure.map { "\($0)" } ?? "no error")")
        #expect(failure?.level == .transport)
        let requests = server.requests
        #expect(requests.map(\.path) == ["/first", "/bad", "/after"], "\(name): each request was sent once")
        #expect(requests.first?.connection == requests.dropFirst().first?.connection, "\(name): the good connection was reused for /bad")
        #expect(requests.last?.connection != requests.dropFirst().first?.connection, "\(name): /after came on a new connection")
    }

    @Test func wellFramedVariantsStillSucceedOnOneConnection() async throws {
        let answers: [String] = [
            "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
            "HTTP/1.1 200 OK\r\nContent-Length: 5, 5\r\n\r\nhello",
            "HTTP/1.1 200 OK\r\ntransfer-encoding: Chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
        ]
        let server = try ScriptedServer { index, _ in .send(Data(answers[index % answers.count].utf8), close: false) }
        defer { server.stop() }
        let transport = CurlTransport()
        var options = TransferOptions()
        options.httpVersion = .http1Only
        options.acceptsCompressedResponses = false
        for (index, _) in answers.enumerated() {
            let response = try await transport.send(PreparedRequest(method: .get, url: server.baseURL + "/\(index)", options: options))
            #expect(response.status.code == 200, "answer \(index)")
        }
        #expect(Set(server.requests.map(\.connection)).count == 1, "one kept-alive connection served them all")
        await transport.shutdown()
    }

    /// A field line that begins with `HTTP/` inside a head is a (malformed, dropped) field, not a
    /// new head: the status and the fields before it stay.
    @Test func aFieldThatLooksLikeAStatusLineStartsNoNewHead() async throws {
        let server = try ScriptedServer { _, _ in .send(Data("HTTP/1.1 200 OK\r\nX-A: 1\r\nHTTP/1.1 404 Spoof: x\r\nContent-Length: 2\r\n\r\nok".utf8), close: false) }
        defer { server.stop() }
        let transport = CurlTransport()
        var options = TransferOptions()
        options.httpVersion = .http1Only
        let response = try await transport.send(PreparedRequest(method: .get, url: server.baseURL + "/spoof", options: options))
        #expect(response.status.code == 200)
        #expect(response.headers[HTTPField.Name("X-A")!] == "1")
        #expect(response.body == Data("ok".utf8))
        await transport.shutdown()
    }

    /// A chunked body's trailer fields are not header fields (RFC 9110 §6.5.1): they do not reach
    /// the response's headers, and a malformed one does not fail an answer that arrived whole.
    @Test func trailerFieldsAreNotHeaderFields() async throws {
        let answer = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nX-Head: 1\r\n\r\n5\r\nhello\r\n0\r\nX-Checksum: abc\r\nContent-Length: 1, 2\r\n\r\n"
        let server = try ScriptedServer { _, _ in .send(Data(answer.utf8), close: false) }
        defer { server.stop() }
        let transport = CurlTransport()
        var options = TransferOptions()
        options.httpVersion = .http1Only
        for path in ["/one", "/two"] {
            let response = try await transport.send(PreparedRequest(method: .get, url: server.baseURL + path, options: options))
            #expect(response.status.code == 200)
            #expect(response.body == Data("hello".utf8))
            #expect(response.headers[HTTPField.Name("X-Head")!] == "1")
            #expect(response.headers[HTTPField.Name("X-Checksum")!] == nil)
            #expect(response.headers[.contentLength] == nil)
        }
        #expect(Set(server.requests.map(\.connection)).count == 1, "the connection stays reusable")
        await transport.shutdown()
    }
}
