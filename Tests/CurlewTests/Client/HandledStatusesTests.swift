import Curlew
import Foundation
import HTTPTypes
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// A conditional-request middleware of a user's own: it answers a `304` itself.
private struct StoredAnswer: APIMiddleware {
    /// The statuses the middleware saw.
    final class Seen: Sendable {
        let statuses = Mutex<[Int]>([])
    }
    let seen: Seen
    func intercept(_ request: PreparedRequest, context: MiddlewareContext, next: MiddlewareNext) async throws -> RawResponse {
        var conditional = context
        conditional.handledStatuses.insert(304)
        var outgoing = request
        outgoing.headers[.ifNoneMatch] = "\"v1\""
        let raw = try await next(outgoing, conditional)
        seen.statuses.withLock { $0.append(raw.status.code) }
        guard raw.status.code == 304 else { return raw }
        return RawResponse(status: .ok, body: Data("stored".utf8), url: request.url)
    }
}

@Suite("Statuses an outer middleware answers itself come back as responses")
struct HandledStatusesTests {
    @Test func aHandledStatusReachesTheMiddlewareAsAResponseNotAnError() async throws {
        try await withLoopback(handler: { request in
            request.header("If-None-Match") == "\"v1\"" ? ServerResponse(status: 304, headers: [("ETag", "\"v1\"")]) : .text("fresh")
        }) { server, _, transport in
            let seen = StoredAnswer.Seen()
            let client = APIClient(
                configuration: ClientConfiguration(baseURL: server.baseURL, middleware: [StoredAnswer(seen: seen)]), transport: transport)
            let answer = try await client.send(Send(path: "thing"))
            #expect(answer == "stored")
            #expect(seen.statuses.withLock { $0 } == [304])
            #expect(server.requestCount == 1)
        }
    }

    @Test func anUnhandledNotModifiedIsStillAStatusError() async throws {
        try await withLoopback(handler: { _ in ServerResponse(status: 304) }) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "thing")) }
            #expect(error?.code == .unacceptableStatus)
            #expect(error?.status?.code == 304)
        }
    }
}
