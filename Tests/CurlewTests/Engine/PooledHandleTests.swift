@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

/// Pooled easy handles keep their options between transfers (no `curl_easy_reset`) and their
/// header list per header set; nothing one request sets may reach the next one.
@Suite("Pooled easy handles")
struct PooledHandleTests {
    /// Sends one request straight to the transport.
    private func send(
        _ transport: CurlTransport, _ server: LoopbackServer, _ method: HTTPRequest.Method = .get, path: String = "/echo",
        headers: HTTPFields = [:], body: Data? = nil, configure: (inout TransferOptions) -> Void = { _ in }
    ) async throws -> RawResponse {
        var options = TransferOptions()
        configure(&options)
        let request = PreparedRequest(method: method, url: server.baseURL + path, headers: headers, body: body, options: options)
        return try await transport.send(request, context: transferContext(for: request))
    }

    @Test func compressionMethodAndHeadersDoNotCarryOver() async throws {
        try await withLoopback(handler: { request in
            .text(request.method == "HEAD" ? "" : "ok")
        }) { server, _, transport in
            var custom = HTTPFields()
            custom[HTTPField.Name("X-Step")!] = "1"
            _ = try await send(transport, server, headers: custom)
            _ = try await send(transport, server, headers: custom) { $0.acceptsCompressedResponses = false }
            custom[HTTPField.Name("X-Step")!] = "2"
            _ = try await send(transport, server, headers: custom)
            _ = try await send(transport, server, headers: custom)
            _ = try await send(transport, server, .head)
            _ = try await send(transport, server, .post, body: Data("form".utf8))
            _ = try await send(transport, server, .put, body: Data("put".utf8))
            _ = try await send(transport, server)
            _ = try await send(transport, server, .post)
            _ = try await send(transport, server)

            let requests = server.requests
            #expect(requests.map(\.method) == ["GET", "GET", "GET", "GET", "HEAD", "POST", "PUT", "GET", "POST", "GET"])
            #expect(requests.map { $0.header("X-Step") } == ["1", "1", "2", "2", nil, nil, nil, nil, nil, nil])
            #expect(requests.map { $0.header("Accept-Encoding") != nil } == [true, false, true, true, true, true, true, true, true, true])
            #expect(requests.map(\.bodyText) == ["", "", "", "", "", "form", "put", "", "", ""])
            #expect(requests.map { $0.header("Expect") } == Array(repeating: nil, count: 10))
            #expect(server.connectionsAccepted == 1)
        }
    }

    /// Curlew's `Accept-Encoding: gzip, deflate, br, zstd` is a line of the handle's header list: a
    /// request's own `Accept-Encoding` replaces it (sent once, as it is), and the next request on
    /// the same handle gets Curlew's back.
    @Test func aRequestsOwnAcceptEncodingIsSentAloneAndDoesNotCarryOver() async throws {
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            var own = HTTPFields()
            own[.acceptEncoding] = "identity"
            _ = try await send(transport, server, headers: own)
            _ = try await send(transport, server)
            _ = try await send(transport, server, headers: own)
            _ = try await send(transport, server) { $0.acceptsCompressedResponses = false }
            let requests = server.requests
            #expect(requests.map { $0.headerValues("Accept-Encoding") } == [["identity"], ["gzip, deflate, br, zstd"], ["identity"], []])
            #expect(server.connectionsAccepted == 1)
        }
    }

    @Test func aBodilessCustomMethodAfterAPostOfBytesSendsNoBody() async throws {
        try await withLoopback(handler: { _ in .text("ok") }) { server, _, transport in
            // The POST of bytes leaves its handle with its options kept; the DELETE and OPTIONS
            // that reuse it must not resend the POST's bytes or its content type.
            _ = try await send(transport, server, .post, body: Data("posted".utf8))
            _ = try await send(transport, server, .delete)
            _ = try await send(transport, server, .post, body: Data("again".utf8))
            _ = try await send(transport, server, .options)
            _ = try await send(transport, server)
            let requests = server.requests
            #expect(requests.map(\.method) == ["POST", "DELETE", "POST", "OPTIONS", "GET"])
            #expect(requests.map(\.bodyText) == ["posted", "", "again", "", ""])
            // No content type was given: libcurl must not invent its form type either.
            #expect(requests.map { $0.header("Content-Type") } == [nil, nil, nil, nil, nil])
            #expect(requests.map { $0.header("Content-Length") } == ["6", nil, "5", nil, nil])
            #expect(requests.map { $0.header("Expect") } == [nil, nil, nil, nil, nil])
            #expect(server.connectionsAccepted == 1)
        }
    }

    /// One pooled handle through every way a method and body are set — bytes, none, a file and a
    /// stream read while sending, HEAD, custom methods — in an order that moves between each kind:
    /// the handle applies only what differs, and each request still goes out exactly as prepared.
    @Test func everyMethodAndBodyKindFollowsEveryOtherOnOneHandle() async throws {
        try await withLoopback(handler: { request in .text(request.method == "HEAD" ? "" : "ok") }) { server, _, transport in
            let path = FileManager.default.temporaryDirectory.appendingPathComponent("pooled-\(UUID().uuidString).txt").path
            try Data("from-file".utf8).write(to: URL(fileURLWithPath: path))
            defer { try? FileManager.default.removeItem(atPath: path) }
            func stream(_ text: String, known: Bool) -> PreparedBody {
                let bytes = Data(text.utf8)
                return .stream(
                    RequestBodyStream.once(
                        length: known ? Int64(bytes.count) : nil,
                        AsyncThrowingStream<Data, any Error> {
                            $0.yield(bytes); $0.finish()
                        }))
            }
            let steps: [(HTTPRequest.Method, PreparedBody?)] = [
                (.post, .data(Data("bytes-1".utf8))),
                (.put, .file(path: path, length: 9)),
                (.get, nil),
                (.post, stream("streamed-post", known: false)),
                (.head, nil),
                (.patch, .data(Data("patched".utf8))),
                (.post, .file(path: path, length: 9)),
                (.delete, nil),
                (.put, stream("streamed-put", known: true)),
                (.post, nil),
                (.options, nil),
                (.post, .data(Data("bytes-2".utf8))),
                (.get, nil),
            ]
            for (method, content) in steps {
                let request = PreparedRequest(method: method, url: server.baseURL + "/echo", content: content)
                let response = try await transport.send(request, context: transferContext(for: request))
                #expect(response.status.code == 200)
            }
            let seen = server.requests
            #expect(seen.map(\.method) == ["POST", "PUT", "GET", "POST", "HEAD", "PATCH", "POST", "DELETE", "PUT", "POST", "OPTIONS", "POST", "GET"])
            #expect(
                seen.map(\.bodyText) == [
                    "bytes-1", "from-file", "", "streamed-post", "", "patched", "from-file", "", "streamed-put", "", "", "bytes-2", "",
                ])
            #expect(seen.map { $0.header("Expect") }.allSatisfy { $0 == nil })
            #expect(server.connectionsAccepted == 1, "one connection, so one pooled handle carried every step")
        }
    }

    @Test func aTotalTimeoutDoesNotCarryOverToARequestWithout() async throws {
        try await withLoopback(handler: { request in
            try? await Task.sleep(for: .milliseconds(request.path == "/slow" ? 2_500 : 0))
            return .text("ok")
        }) { server, _, transport in
            // The handle of a timed-out GET goes back to the pool with its options kept…
            await #expect(throws: CurlewError.self) {
                _ = try await send(transport, server, path: "/slow") { $0.totalTimeout = .milliseconds(200) }
            }
            // …and the next request, without a total timeout, must not inherit the 200 ms.
            let slow = try await send(transport, server, path: "/slow") { $0.totalTimeout = nil }
            #expect(slow.status == .ok)
            #expect(slow.body == Data("ok".utf8))
        }
    }

    @Test func aBodyLimitAppliesOnlyWhileSet() async throws {
        try await withLoopback(handler: { _ in .text(String(repeating: "x", count: 4096)) }) { server, _, transport in
            await #expect(throws: CurlewError.self) {
                _ = try await send(transport, server) { $0.maximumBodySize = 1024 }
            }
            let full = try await send(transport, server)
            #expect(full.body.count == 4096)
        }
    }
}
