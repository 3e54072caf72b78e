@testable import Curlew
import Foundation
import HTTPTypes
import LoopbackServer
import Testing
import TestSupport

/// A response's headers stay the transport's raw block until someone reads them: building
/// `HTTPFields` validates every field, and the request path itself needs none of them for an
/// ordinary answer (the redirect step looks only at a redirect's `Location`).
@Suite("Response headers parsed only when read")
struct LazyHeadersTests {
    @Test(arguments: ["plain", "start"])
    func nothingOnTheWayParsesTheHeadersOfAnOrdinaryAnswer(_ path: String) async throws {
        try await withLoopback(handler: { request in
            request.path == "/start" ? .redirect(to: "/plain", status: 302) : .text("ok")
        }) { _, client, _ in
            let response = try await client.response(for: FetchText(path: path))
            #expect(response.value == "ok")
            #expect(response.raw.headerFields.isUnparsedBlock, "no step read every header")
            #expect(response.headers[.contentType] == "text/plain; charset=utf-8")
            #expect(!response.raw.headerFields.isUnparsedBlock)
        }
    }
}
