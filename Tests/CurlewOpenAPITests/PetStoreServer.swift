import CurlewTesting
import Foundation
import LoopbackServer
import Synchronization

/// The sample API (openapi.yaml) on a ``LoopbackServer``, with the scripted misbehaviour the
/// tests need: statuses to answer first, a redirect, answers held until the client goes away,
/// repeated header fields, and bodies of any size produced or checked without keeping a copy.
final class PetStoreServer: Sendable {
    struct State {
        /// Statuses `PUT /v1/blobs/flaky` answers before it accepts (e.g. `[503, 503]`).
        var flakyStatuses: [Int] = []
        /// Requests per `"METHOD /path"`.
        var counts: [String: Int] = [:]
        /// What each upload received: bytes and whether every byte matched the pattern (for
        /// `sink`, whose body is counted and dropped: whether the server kept no byte).
        var uploads: [(name: String, bytes: Int, intact: Bool)] = []
        /// Paths whose held handler saw its connection close.
        var closedWhileHeld: [String] = []
        /// The access token `/v1/me` accepts, and refresh bookkeeping.
        var validToken = "T2"
        var unauthorizedAnswers = 0
        var refreshCalls = 0
        /// `/auth/refresh` answers only after this many 401s (a gate, not a timing).
        var refreshWaitsFor = 0
        var okTokens = 0
        /// The parts of every multipart upload (`POST /v1/pets/{id}/photos`), as the server parsed them.
        var photoUploads: [[RecordedMultipartPart]] = []
        /// What `GET /v1/pets/42` (an `ETag`, `no-cache`) answered: full bodies and `304`s.
        var revalidation = (ok: 0, notModified: 0)
    }

    let state = Mutex(State())
    let server: LoopbackServer
    /// Held event streams send their second event when this opens.
    let eventGate = EventGate()
    /// The server's handler reaches this store through the link; ``shutdown()`` clears it, so
    /// the store and the server do not keep each other alive (LeakSanitizer reports a cycle).
    private let link: Link

    final class Link: Sendable {
        let store = Mutex<PetStoreServer?>(nil)
    }

    /// The pattern every large body follows: byte `i` is `i & 0xFF`.
    static let patternChunk: [UInt8] = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0) }

    private init(server: LoopbackServer, link: Link) {
        self.server = server
        self.link = link
    }

    static func start() async throws -> PetStoreServer {
        let link = Link()
        // `PUT /v1/blobs/sink` bodies are counted and dropped: a gigabyte upload costs no memory.
        let server = try await LoopbackServer.start(discardingRequestBodies: { method, path in method == "PUT" && path == "/v1/blobs/sink" }) { request in
            guard let store = link.store.withLock({ $0 }) else { return .text("not ready", status: 500) }
            return await store.handle(request)
        }
        let store = PetStoreServer(server: server, link: link)
        link.store.withLock { $0 = store }
        return store
    }

    var serverURL: URL {
        get throws {
            guard let url = URL(string: server.baseURL + "/v1") else { throw CocoaError(.fileReadInvalidFileName) }
            return url
        }
    }

    func count(_ key: String) -> Int { state.withLock { $0.counts[key, default: 0] } }
    var uploads: [(name: String, bytes: Int, intact: Bool)] { state.withLock { $0.uploads } }
    var closedWhileHeld: [String] { state.withLock { $0.closedWhileHeld } }

    func shutdown() async {
        await server.shutdown()
        link.store.withLock { $0 = nil }
    }

    private func handle(_ request: ServerRequest) async -> ServerResponse {
        let key = "\(request.method) \(request.path)"
        state.withLock { $0.counts[key, default: 0] += 1 }
        let parts = request.path.split(separator: "/").map(String.init)
        // The last segment of `/v1/pets/{id}` and `/v1/blobs/{name}`, as a route key of its own.
        var route = parts.count == 3 && ["pets", "blobs"].contains(parts[1]) ? ["v1", parts[1], "*"] : parts
        if parts.count == 4, parts[1] == "pets" { route[2] = "*" }
        let last = parts.last ?? ""
        switch (request.method, route) {
        case ("GET", ["v1", "pets"]):
            return ServerResponse(
                status: 200,
                headers: [
                    ("Content-Type", "application/json"), ("Set-Cookie", "session=abc; Path=/"), ("X-Trace", "first"),
                    ("Set-Cookie", "theme=dark; Path=/"), ("X-Trace", "second"), ("Cache-Control", "max-age=60"),
                ],
                body: Array(#"[{"id":1,"name":"Rex","tag":"dog"},{"id":2,"name":"Tom"}]"#.utf8))
        case ("POST", ["v1", "pets"]):
            guard request.header("Content-Type")?.hasPrefix("application/json") == true, let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
                let name = object["name"] as? String
            else { return .text("bad pet", status: 400) }
            let tags = request.headerValues("X-Tag").joined(separator: ",")
            return .json(#"{"id":7,"name":"\#(name)","tag":"\#(tags)"}"#, status: 201)
        case ("POST", ["v1", "pets", "*", "photos"]):
            guard let contentType = request.header("Content-Type"), let parts = try? RecordedMultipartPart.parts(of: Data(request.body), contentType: contentType) else {
                return .text("not multipart", status: 400)
            }
            state.withLock { $0.photoUploads.append(parts) }
            let receipts = parts.map { part in
                let filename = part.filename.map { #","filename":"\#($0)""# } ?? ""
                let type = part.contentType.map { #","contentType":"\#($0)""# } ?? ""
                return #"{"name":"\#(part.name)"\#(filename)\#(type),"bytes":\#(part.body.count)}"#
            }
            return .json("[" + receipts.joined(separator: ",") + "]", status: 201)
        case ("GET", ["v1", "pets", "*"]) where last == "42":
            // Stored but revalidated on every use: `no-cache` with an entity tag.
            let etag = #""rex-v1""#
            let matches = request.header("If-None-Match") == etag
            state.withLock { state in
                if matches { state.revalidation.notModified += 1 } else { state.revalidation.ok += 1 }
            }
            let headers = [("ETag", etag), ("Cache-Control", "no-cache"), ("X-Trace", "first"), ("X-Trace", "second")]
            guard !matches else { return ServerResponse(status: 304, headers: headers, body: []) }
            return ServerResponse(status: 200, headers: [("Content-Type", "application/json")] + headers, body: Array(#"{"id":42,"name":"Rex","tag":"dog"}"#.utf8))
        case ("GET", ["v1", "pets", "*"]) where last == "404":
            return .text("no such pet", status: 404)
        case ("GET", ["v1", "pets", "*"]) where last == "999":
            // Held until the client goes away: cancellation before the head, a total timeout.
            await request.connection.closed()
            state.withLock { $0.closedWhileHeld.append(request.path) }
            return .text("too late", status: 500)
        case ("GET", ["v1", "pets", "*"]):
            return .json(#"{"id":\#(last),"name":"Pet \#(last)"}"#)
        case ("PUT", ["v1", "blobs", "*"]) where last == "sink":
            state.withLock { $0.uploads.append((last, request.bodyLength, request.body.isEmpty)) }
            return .json(#"{"bytes":\#(request.bodyLength)}"#)
        case ("PUT", ["v1", "blobs", "*"]) where last == "moved":
            return .redirect(to: "/v1/blobs/target", status: 307)
        case ("PUT", ["v1", "blobs", "*"]):
            let name = last
            let status = state.withLock { state -> Int? in
                name == "flaky" && !state.flakyStatuses.isEmpty ? state.flakyStatuses.removeFirst() : nil
            }
            let intact = Self.followsPattern(request.body)
            state.withLock { $0.uploads.append((name, request.body.count, intact)) }
            if let status { return ServerResponse(status: status, headers: [("Retry-After", "0")], body: []) }
            return .json(#"{"bytes":\#(request.body.count)}"#)
        case ("GET", ["v1", "blobs", "*"]):
            guard let mebibytes = Int(last) else { return .text("size in MiB", status: 404) }
            return .stream(headers: [("Content-Type", "application/octet-stream"), ("Content-Length", String(mebibytes << 20))]) { writer in
                for _ in 0..<mebibytes { try await writer.write(Self.patternChunk) }
            }
        case ("GET", ["v1", "events"]):
            // One event, then nothing until ``eventGate`` opens (a second event) or the client
            // goes away (a stall, or a reader that stops).
            let connection = request.connection
            let gate = eventGate
            return .stream(headers: [("Content-Type", "text/event-stream")]) { writer in
                try await writer.write("data: {\"pet\":1}\n\n")
                await gate.wait()
                if !connection.isClosed { try? await writer.write("data: {\"pet\":2}\n\n") }
                await connection.closed()
                self.state.withLock { $0.closedWhileHeld.append("/v1/events") }
            }
        case ("GET", ["v1", "me"]):
            let token = String((request.header("Authorization") ?? "").dropFirst("Bearer ".count))
            return state.withLock { state -> ServerResponse in
                guard token == state.validToken else {
                    state.unauthorizedAnswers += 1
                    return .text("expired", status: 401)
                }
                state.okTokens += 1
                return .json(#"{"user":"ana"}"#)
            }
        case ("POST", ["auth", "refresh"]):
            while state.withLock({ $0.unauthorizedAnswers < $0.refreshWaitsFor }), !request.connection.isClosed {
                try? await Task.sleep(for: .milliseconds(5))
            }
            return state.withLock { state -> ServerResponse in
                state.refreshCalls += 1
                return .text(state.validToken)
            }
        default:
            return .text("no route for \(key)", status: 404)
        }
    }

    /// Whether byte `i` of `body` is `i & 0xFF` for every `i`.
    static func followsPattern(_ body: [UInt8]) -> Bool {
        body.withUnsafeBufferPointer { bytes in
            var index = 0
            while index < bytes.count {
                if bytes[index] != UInt8(truncatingIfNeeded: index) { return false }
                index += 1
            }
            return true
        }
    }
}

/// Opens once; a waiter resumes then, or when its task is cancelled (its connection closed).
final class EventGate: Sendable {
    private struct State {
        var isOpen = false
        var lastID = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = Mutex(State())

    func open() {
        let waiters = state.withLock { state in
            state.isOpen = true
            defer { state.waiters = [:] }
            return state.waiters
        }
        for waiter in waiters.values { waiter.resume() }
    }

    func wait() async {
        let id = state.withLock { state in
            state.lastID += 1
            return state.lastID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLock { state -> Bool in
                    if state.isOpen || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLock { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }
}
