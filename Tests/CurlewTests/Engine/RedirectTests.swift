import Curlew
import Foundation
import LoopbackServer
import Testing
import TestSupport

@Suite("Redirects")
struct RedirectTests {
    @Test func sameOriginRedirectKeepsAuthorization() async throws {
        var router = LoopbackRouter()
        router.on("GET", "/old") { _, _ in .redirect(to: "/new") }
        router.on("GET", "/new") { request, _ in .text(request.header("Authorization") ?? "none") }
        try await withLoopback(router: router) { server, client, _ in
            let response = try await client.response(for: Send(path: "old", headers: ["Authorization": "Bearer T1"]))
            #expect(response.value == "Bearer T1")
            #expect(response.url.hasSuffix("/new"))
            #expect(server.requests.map(\.path) == ["/old", "/new"])
        }
    }

    @Test func redirectToAnotherPortDropsAuthorizationAndCookie() async throws {
        let other = try await LoopbackServer.start { request in .text("landed") }
        let target = other.baseURL + "/landing"
        try await withLoopback(handler: { _ in .redirect(to: target) }) { server, client, _ in
            let text = try await client.send(Send(path: "start", headers: ["Authorization": "Bearer secret", "Cookie": "session=s1", "X-Plain": "kept"]))
            #expect(text == "landed")
            #expect(server.requests.first?.header("Authorization") == "Bearer secret")
            let landed = try #require(other.requests.first)
            #expect(landed.path == "/landing")
            #expect(landed.header("Authorization") == nil)
            #expect(landed.header("Cookie") == nil)
            #expect(landed.header("X-Plain") == "kept")
        }
        await other.shutdown()
    }

    @Test func redirectToFileSchemeIsRefused() async throws {
        try await withLoopback(handler: { _ in .redirect(to: "file:///etc/passwd") }) { _, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "x")) }
            #expect(error?.code == .redirectRefused)
        }
    }

    @Test func redirectLoopStopsAtTheLimit() async throws {
        var options = TransferOptions()
        options.redirectLimit = 3
        try await withLoopback(transferOptions: options, handler: { _ in .redirect(to: "/again") }) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "x")) }
            #expect(error?.code == .tooManyRedirects)
            #expect(server.requestCount == 4)
        }
    }

    @Test func redirectLimitZeroReturnsTheRedirect() async throws {
        var options = TransferOptions()
        options.redirectLimit = 0
        try await withLoopback(transferOptions: options, handler: { _ in .redirect(to: "/next") }) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "x")) }
            #expect(error?.status?.code == 302)
            #expect(server.requestCount == 1)
        }
    }

    /// Issue 30, defect 1: a hop's body is dropped unread. A 302 whose gzip body inflates past
    /// `maximumBodySize` (a small gzip bomb) is followed, not failed with `bodyTooLarge`.
    @Test func aCompressedRedirectBodyIsNeitherDecodedNorCountedAgainstTheLimit() async throws {
        var options = TransferOptions()
        options.maximumBodySize = 64 * 1024
        let bomb = [UInt8](compressed(Data(count: 8 * 1024 * 1024), .gzip))
        #expect(bomb.count < options.maximumBodySize, "the compressed body itself fits; only its inflated size does not")
        var router = LoopbackRouter()
        router.on("GET", "/bomb") { _, _ in
            ServerResponse(status: 302, headers: [("Location", "/landed"), ("Content-Encoding", "gzip"), ("Content-Type", "text/plain")], body: bomb)
        }
        router.on("GET", "/landed") { _, _ in .text("landed") }
        try await withLoopback(transferOptions: options, router: router) { server, client, _ in
            let response = try await client.response(for: Send(path: "bomb"))
            #expect(response.value == "landed")
            #expect(response.status.code == 200)
            #expect(server.requests.map(\.path) == ["/bomb", "/landed"])
        }
    }

    /// A hop's body larger than the size limit, uncompressed: followed as well.
    @Test func aRedirectBodyLargerThanTheLimitIsFollowed() async throws {
        var options = TransferOptions()
        options.maximumBodySize = 1024
        var router = LoopbackRouter()
        router.on("GET", "/big") { _, _ in
            ServerResponse(status: 301, headers: [("Location", "/small")], body: [UInt8](repeating: 0x61, count: 200_000))
        }
        router.on("GET", "/small") { _, _ in .text("small") }
        try await withLoopback(transferOptions: options, router: router) { server, client, _ in
            let text = try await client.send(Send(path: "big"))
            #expect(text == "small")
            #expect(server.requests.map(\.path) == ["/big", "/small"])
        }
    }

    /// A hop's body beyond what is read and dropped (``TransferStateMachine/hopBodyLimit``, 1 MiB),
    /// chunked so that libcurl cannot refuse it by its length first: the hop's transfer stops
    /// (its connection closes rather than reading on) and the `Location` is still followed, on a
    /// new connection.
    @Test func aRedirectBodyBeyondTheHopLimitStopsTheHopAndIsFollowed() async throws {
        var router = LoopbackRouter()
        router.on("GET", "/huge") { _, _ in
            .stream(status: 302, headers: [("Location", "/after")]) { writer in
                for _ in 0..<128 { try await writer.write([UInt8](repeating: 0x62, count: 64 * 1024)) }
            }
        }
        router.on("GET", "/after") { _, _ in .text("after") }
        try await withLoopback(router: router) { server, client, _ in
            let text = try await client.send(Send(path: "huge"))
            #expect(text == "after")
            #expect(server.requests.map(\.path) == ["/huge", "/after"])
            #expect(server.connectionsAccepted == 2, "the stopped hop's connection is not reused")
        }
    }

    /// A chunked hop's body (no length for libcurl to check first) larger than the size limit
    /// but within the hop limit: read to its end and dropped, never counted, so the connection
    /// is reused for the next hop.
    @Test func aChunkedRedirectBodyLargerThanTheLimitIsDroppedAndTheConnectionReused() async throws {
        var options = TransferOptions()
        options.maximumBodySize = 1024
        var router = LoopbackRouter()
        router.on("GET", "/chunked") { _, _ in
            .stream(status: 303, headers: [("Location", "/small")]) { writer in
                for _ in 0..<4 { try await writer.write([UInt8](repeating: 0x63, count: 50_000)) }
            }
        }
        router.on("GET", "/small") { _, _ in .text("small") }
        try await withLoopback(transferOptions: options, router: router) { server, client, _ in
            let text = try await client.send(Send(path: "chunked"))
            #expect(text == "small")
            #expect(server.requests.map(\.path) == ["/chunked", "/small"])
            #expect(server.connectionsAccepted == 1)
        }
    }

    /// A streamed call and a download follow a compressed hop the same way: the hop's body is
    /// never decoded or delivered; the stream and the file hold the final answer only.
    @Test func streamsAndDownloadsSkipACompressedHopsBody() async throws {
        var options = TransferOptions()
        options.maximumBodySize = 64 * 1024
        let bomb = [UInt8](compressed(Data(count: 8 * 1024 * 1024), .gzip))
        var router = LoopbackRouter()
        router.on("GET", "/bomb") { _, _ in
            ServerResponse(status: 307, headers: [("Location", "/landed"), ("Content-Encoding", "gzip")], body: bomb)
        }
        router.on("GET", "/landed") { _, _ in .text("landed") }
        let folder = try temporaryDirectory("redirect-hop-download")
        defer { try? FileManager.default.removeItem(at: folder) }
        try await withLoopback(transferOptions: options, router: router) { server, client, _ in
            let streamed = try await client.stream(Send(path: "bomb"))
            #expect(streamed.status.code == 200)
            #expect(try await streamed.value.collect(upTo: 1 << 20) == Data("landed".utf8))
            let file = try await client.download(Send(path: "bomb"), to: folder.appendingPathComponent("landed.txt"))
            #expect(file.length == 6)
            #expect(try Data(contentsOf: file.url) == Data("landed".utf8))
            #expect(server.requests.map(\.path) == ["/bomb", "/landed", "/bomb", "/landed"])
        }
    }

    /// With redirects off, a 3xx is the answer and its body is delivered whole.
    @Test func aRedirectThatIsNotFollowedKeepsItsBody() async throws {
        var options = TransferOptions()
        options.redirectLimit = 0
        try await withLoopback(
            transferOptions: options,
            handler: { _ in
                ServerResponse(status: 302, headers: [("Location", "/next")], body: Array("moved here".utf8))
            }
        ) { server, client, _ in
            let error = await #expect(throws: CurlewError.self) { try await client.send(Send(path: "x")) }
            #expect(error?.status?.code == 302)
            #expect(error?.responseBody.map { String(decoding: $0, as: UTF8.self) } == "moved here")
            #expect(server.requestCount == 1)
        }
    }
}
