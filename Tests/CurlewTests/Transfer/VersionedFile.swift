@testable import Curlew
@testable import CurlewCore
import Foundation
import LoopbackServer
import Synchronization
import Testing
import TestSupport

/// A file that changes on the server: version `v` has other bytes, another `Last-Modified` and,
/// when asked, another `ETag`. Honours `Range: bytes=S-` when `If-Range` matches the current
/// validator, or always when ``VersionedFile/Behaviour/ignoresIfRange``.
final class VersionedFile: Sendable {
    struct Behaviour: Sendable {
        var version = 1
        var length = 256 * 1024 + 7
        var sendsETag = true
        /// Send the `ETag` bare (`v1`), not quoted (`"v1"`), as some servers do.
        var bareETag = false
        /// Send a weak `ETag` (`W/"v1"`).
        var weakETag = false
        var ignoresIfRange = false
        /// Cut the next full answer after this many body bytes (then reset).
        var cutOnce: Int?
        /// Hold full answers after this many body bytes until ``VersionedFile/release`` opens.
        var holdsAfter: Int?
    }

    let behaviour = Mutex(Behaviour())
    /// Lets a full answer held by ``Behaviour/holdsAfter`` go on.
    let release = TestGate()

    func update(_ change: (inout Behaviour) -> Void) { behaviour.withLock { change(&$0) } }

    /// The bytes of `version`: a pattern that differs at every offset between versions.
    static func bytes(version: Int, length: Int) -> [UInt8] {
        (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ $0 >> 8 &+ version &* 101) }
    }

    static func lastModified(version: Int) -> String { "Wed, \(10 + version) Oct 2015 07:28:00 GMT" }

    func router() -> LoopbackRouter {
        var router = LoopbackRouter()
        router.on("GET", "/versioned") { [self] request, _ in serve(request) }
        return router
    }

    private func serve(_ request: ServerRequest) -> ServerResponse {
        let current = behaviour.withLock { current in
            defer { current.cutOnce = nil }
            return current
        }
        let body = Self.bytes(version: current.version, length: current.length)
        let lastModified = Self.lastModified(version: current.version)
        let etag =
            current.sendsETag
            ? (current.bareETag ? "v\(current.version)" : (current.weakETag ? "W/" : "") + "\"v\(current.version)\"") : nil
        var headers: [(name: String, value: String)] = [
            ("Content-Type", "application/octet-stream"), ("Last-Modified", lastModified),
        ]
        if let etag { headers.append(("ETag", etag)) }
        if let range = request.header("Range"), range.hasPrefix("bytes="), range.hasSuffix("-"),
            let start = Int(range.dropFirst(6).dropLast()),
            current.ignoresIfRange || request.header("If-Range") == nil || request.header("If-Range") == (etag ?? lastModified)
        {
            guard start < body.count else {
                return ServerResponse(status: 416, headers: headers + [("Content-Range", "bytes */\(body.count)")], body: [])
            }
            headers.append(("Content-Range", "bytes \(start)-\(body.count - 1)/\(body.count)"))
            return ServerResponse(status: 206, headers: headers, body: Array(body[start...]))
        }
        headers.append(("Content-Length", String(body.count)))
        if let held = current.holdsAfter, current.cutOnce == nil {
            let release = self.release
            return .stream(headers: headers) { writer in
                try await writer.write(Array(body[..<held]))
                while !release.isOpen, !request.connection.isClosed { try? await Task.sleep(for: .milliseconds(5)) }
                try await writer.write(Array(body[held...]))
            }
        }
        guard let cut = current.cutOnce else { return ServerResponse(status: 200, headers: headers, body: body) }
        return .stream(headers: headers) { writer in
            try await writer.write(Array(body[..<cut]))
            throw CancellationError()
        }
    }
}

extension VersionedFile {
    /// A first resumable download of this file into `folder/v.bin`, cut after `cut` bytes, so a
    /// partial file and its record exist; then `body` with the same server.
    func interrupted(
        into folder: URL, cut: Int = 100 * 1024, _ body: (LoopbackServer, APIClient, URL) async throws -> Void
    ) async throws {
        update { $0.cutOnce = cut }
        try await withLoopback(router: router()) { server, client, _ in
            let target = folder.appendingPathComponent("v.bin")
            let error = await #expect(throws: CurlewError.self) {
                try await client.download(FileGet(path: "/versioned"), to: target, options: DownloadOptions(resumable: true))
            }
            #expect(error?.code == .connectionReset)
            #expect(contents(of: folder).filter { $0.hasSuffix(".curlew-partial") }.count == 1)
            try await body(server, client, target)
        }
    }
}
