import Curlew
import Foundation
import HTTPTypes
import LoopbackServer
import TestSupport
import Testing
import TestSupport

/// Error kinds say what happened: connect vs total timeouts (and what failover and retry do with
/// them), a HEAD never has a body, a placeholder without a value is never sent.
@Suite("Error kinds")
struct ErrorKindTests {
    @Test func aConnectThatNeverCompletesIsAConnectTimeout() async throws {
        let blackhole = try BlackholeListener()
        defer { blackhole.close() }
        try await withTransport { transport in
            let options = http1Options {
                $0.connectTimeout = .milliseconds(200)
                $0.totalTimeout = .seconds(30)
            }
            let error = await #expect(throws: CurlewError.self) {
                _ = try await transport.send(PreparedRequest(method: .get, url: blackhole.baseURL + "/x", options: options))
            }
            // The kind says which timeout ended it (the total one would be `.totalTimeout`).
            #expect(error?.code == .connectTimeout, "\(error.map { "\($0)" } ?? "")")
        }
    }

    @Test func aTotalTimeoutShorterThanTheConnectTimeoutIsATotalTimeout() async throws {
        let blackhole = try BlackholeListener()
        defer { blackhole.close() }
        try await withTransport { transport in
            let options = http1Options {
                $0.connectTimeout = .seconds(5)
                $0.totalTimeout = .milliseconds(200)
            }
            let error = await #expect(throws: CurlewError.self) {
                _ = try await transport.send(PreparedRequest(method: .get, url: blackhole.baseURL + "/x", options: options))
            }
            #expect(error?.code == .totalTimeout)
        }
    }

    @Test func aServerThatAcceptsButNeverAnswersIsATotalTimeout() async throws {
        try await withLoopback(handler: { request in
            await request.connection.closed()
            return .text("late")
        }) { server, _, transport in
            let options = http1Options {
                $0.connectTimeout = .seconds(5)
                $0.totalTimeout = .milliseconds(300)
            }
            let error = await #expect(throws: CurlewError.self) {
                _ = try await transport.send(PreparedRequest(method: .get, url: server.baseURL + "/x", options: options))
            }
            #expect(error?.code == .totalTimeout)
            #expect(server.requestCount == 1)
        }
    }

    @Test func failoverMovesOnAfterAConnectTimeout() async throws {
        let blackhole = try BlackholeListener()
        defer { blackhole.close() }
        try await withLoopback(handler: { _ in .text("backup") }) { backup, _, transport in
            let failover = FailoverMiddleware(baseURLs: [blackhole.baseURL, backup.baseURL])
            let client = APIClient(
                configuration: ClientConfiguration(
                    baseURL: blackhole.baseURL, transferOptions: http1Options { $0.connectTimeout = .milliseconds(200) },
                    middleware: [failover]),
                transport: transport)
            let answer = try await client.send(FetchText(path: "x"))
            #expect(answer == "backup")
            #expect(backup.requests.map(\.path) == ["/x"])
            #expect(failover.currentBaseURL == backup.baseURL)
        }
    }

    @Test func retryRetriesAConnectTimeoutForAGet() async throws {
        let blackhole = try BlackholeListener()
        defer { blackhole.close() }
        try await withTransport { transport in
            let client = APIClient(
                configuration: ClientConfiguration(
                    baseURL: blackhole.baseURL, transferOptions: http1Options { $0.connectTimeout = .milliseconds(150) },
                    middleware: [RetryMiddleware(maximumAttempts: 3, baseDelay: .milliseconds(1), maximumDelay: .milliseconds(1))]),
                transport: transport)
            let events = client.events
            let error = await #expect(throws: CurlewError.self) { try await client.send(FetchText(path: "x")) }
            #expect(error?.code == .connectTimeout)
            var retries = 0
            for await event in events {
                if event.kind == .retryScheduled { retries += 1 }
                if event.kind == .failed || retries == 2 { break }
            }
            #expect(retries == 2, "three attempts in all")
        }
    }

    @Test func headWithABigContentLengthSucceeds() async throws {
        let server = try ScriptedServer { _, request in
            request.method == "HEAD"
                ? .send(Data("HTTP/1.1 200 OK\r\nContent-Length: 999999999\r\nContent-Type: video/mp4\r\n\r\n".utf8), close: false)
                : .ok("after")
        }
        defer { server.stop() }
        try await withTransport { transport in
            let options = http1Options { $0.maximumBodySize = 1024 }
            let head = try await transport.send(PreparedRequest(method: .head, url: server.baseURL + "/movie", options: options))
            #expect(head.status.code == 200)
            #expect(head.body.isEmpty)
            #expect(head.headers[.contentLength] == "999999999")
            let after = try await transport.send(PreparedRequest(method: .get, url: server.baseURL + "/next", options: options))
            #expect(String(decoding: after.body, as: UTF8.self) == "after")
            #expect(server.connectionCount == 1, "the HEAD's connection was reused: no body was expected after it")
        }
        // A GET of the same size still hits the limit.
        let big = try ScriptedServer { _, _ in .send(Data("HTTP/1.1 200 OK\r\nContent-Length: 999999999\r\n\r\n".utf8), close: true) }
        defer { big.stop() }
        try await withTransport { transport in
            let error = await #expect(throws: CurlewError.self) {
                _ = try await transport.send(PreparedRequest(method: .get, url: big.baseURL + "/movie", options: http1Options { $0.maximumBodySize = 1024 }))
            }
            #expect(error?.code == .bodyTooLarge)
        }
    }

    @Test func anUnmatchedPlaceholderIsInvalidPathAndNothingIsSent() async throws {
        try await withLoopback(handler: { _ in .text("sent") }) { server, client, _ in
            let withQuery = await #expect(throws: CurlewError.self) { try await client.send(PlaceholderWithQuery(term: "x")) }
            #expect(withQuery?.code == .invalidPath)
            #expect(withQuery?.message.contains("{album}") == true)
            let bare = await #expect(throws: CurlewError.self) { try await client.send(FetchText(path: "albums/{album}/search")) }
            #expect(bare?.code == .invalidPath)
            #expect(server.requestCount == 0, "nothing was sent")
        }
    }
}

/// A path with a placeholder but only a query parameter.
struct PlaceholderWithQuery: Endpoint {
    typealias Response = String
    @Query var term: String
    var path: String { "albums/{album}/search" }
}
