import Curlew
import Foundation
import HTTPTypes
import Testing

/// A request that must not be sent twice is never resent by libcurl when its reused connection
/// dies before the response; idempotent requests still are, and reuse stays on.
@Suite("No silent replay")
struct ReplayTests {
    /// The first request is answered on a kept-alive connection; the second is read and its
    /// connection closed without an answer; every later request is answered.
    private func closeSecond() throws -> ScriptedServer {
        try ScriptedServer { index, _ in index == 1 ? .closeWithoutAnswer : .ok() }
    }

    @Test(arguments: [HTTPRequest.Method.post, .patch, HTTPRequest.Method(rawValue: "LOCK")].compactMap { $0 })
    func aNonIdempotentRequestIsSentOnceAndFailsTyped(method: HTTPRequest.Method) async throws {
        let server = try closeSecond()
        defer { server.stop() }
        try await withTransport { transport in
            let url = server.baseURL + "/orders"
            let first = try await transport.send(PreparedRequest(method: method, url: url, body: Data("one".utf8), options: http1Options()))
            #expect(first.status.code == 200)
            let error = await #expect(throws: CurlewError.self) {
                _ = try await transport.send(PreparedRequest(method: method, url: url, body: Data("two".utf8), options: http1Options()))
            }
            #expect(error?.code == .connectionClosedBeforeResponse)
            #expect(error?.level == .transport)
            try await Task.sleep(for: .milliseconds(200))
            let requests = server.requests
            #expect(requests.map(\.method) == [method.rawValue, method.rawValue], "the server saw the second request exactly once")
            #expect(requests.map { String(decoding: $0.body, as: UTF8.self) } == ["one", "two"])
            #expect(requests.map(\.connection) == [0, 0], "the second request went out on the reused connection")
            #expect(server.connectionCount <= 2, "libcurl may open the fresh connection before it asks; nothing is sent on it")
        }
    }

    @Test func aBodilessPostIsGuardedToo() async throws {
        let server = try closeSecond()
        defer { server.stop() }
        try await withTransport { transport in
            _ = try await transport.send(PreparedRequest(method: .post, url: server.baseURL + "/a", options: http1Options()))
            let error = await #expect(throws: CurlewError.self) {
                _ = try await transport.send(PreparedRequest(method: .post, url: server.baseURL + "/b", options: http1Options()))
            }
            #expect(error?.code == .connectionClosedBeforeResponse)
            try await Task.sleep(for: .milliseconds(100))
            #expect(server.requests.map(\.path) == ["/a", "/b"])
        }
    }

    @Test(arguments: [HTTPRequest.Method.get, .put, .delete])
    func anIdempotentRequestIsResentOnAFreshConnection(method: HTTPRequest.Method) async throws {
        let server = try closeSecond()
        defer { server.stop() }
        try await withTransport { transport in
            let body: Data? = method == .get ? nil : Data("same".utf8)
            _ = try await transport.send(PreparedRequest(method: method, url: server.baseURL + "/r", body: body, options: http1Options()))
            let second = try await transport.send(PreparedRequest(method: method, url: server.baseURL + "/r", body: body, options: http1Options()))
            #expect(second.status.code == 200)
            let requests = server.requests
            #expect(requests.count == 3, "libcurl resent the idempotent request once")
            #expect(requests.map(\.connection) == [0, 0, 1])
        }
    }

    @Test func postsStillReuseTheConnection() async throws {
        let server = try ScriptedServer { _, _ in .ok() }
        defer { server.stop() }
        try await withTransport { transport in
            for index in 0..<5 {
                let response = try await transport.send(
                    PreparedRequest(
                        method: .post, url: server.baseURL + "/p\(index)", body: Data("\(index)".utf8), options: http1Options()))
                #expect(response.status.code == 200)
            }
            #expect(server.connectionCount == 1)
            #expect(server.requests.count == 5)
        }
    }

    @Test func theRetryMiddlewareDoesNotResendAPostThatLostItsConnection() async throws {
        let server = try closeSecond()
        defer { server.stop() }
        let transport = CurlTransport()
        let client = APIClient(
            configuration: ClientConfiguration(
                baseURL: server.baseURL, transferOptions: http1Options(), middleware: [RetryMiddleware(baseDelay: .milliseconds(1))]),
            transport: transport)
        _ = try await client.send(HardeningPost(path: "one"))
        let error = await #expect(throws: CurlewError.self) { try await client.send(HardeningPost(path: "two")) }
        #expect(error?.code == .connectionClosedBeforeResponse)
        try await Task.sleep(for: .milliseconds(100))
        #expect(server.requests.map(\.path) == ["/one", "/two"])
        await transport.shutdown()
    }
}

/// A POST with a small text body.
struct HardeningPost: Endpoint {
    typealias Response = Data
    var path: String
    var method: HTTPRequest.Method { .post }
    var body: RequestPayload? { .text("payload") }
}
