import Crypto
import Curlew
import Foundation
import LoopbackServer
import Synchronization
import Testing

/// Routes for the download and upload tests.
///
/// `GET /file?n=N[&etag=E][&type=T][&cd=CD][&cut=M][&badrange=1][&lastmod=L][&json=1]`: N
/// pattern bytes with `Content-Type` T (default `application/octet-stream`), an optional `ETag`,
/// `Last-Modified` and raw `Content-Disposition`. Honours `Range: bytes=S-` when `If-Range` is
/// absent or equals the current validator: `206` with `Content-Range: bytes S-(N-1)/N` (with
/// `badrange=1` the range starts one byte later than asked), `416` with `bytes */N` when S ≥ N.
/// `cut=M` closes the connection after M bytes of a full (non-range) answer.
/// `GET /status/{code}`: that status with the text body `failed <code>`.
/// `GET /json`: `200` with `{"code":7,"msg":"no such file"}` as `application/json`.
/// `POST /multipart`: parses the multipart body and answers one line per part:
/// `name|filename|content-type|length|fnv1a`.
/// `PUT|POST /flaky-upload`: `503` on the first request, then `length fnv1a`.
enum FileTransferRoutes {
    static func router(hits: ByteCounter = ByteCounter(), state: ServedFileState = ServedFileState()) -> LoopbackRouter {
        var router = LoopbackRouter()
        router.on("GET", "/file") { request, _ in serveFile(request, state: state) }
        router.on("GET", "/data/{name}") { request, _ in serveFile(request, state: state) }
        router.on("GET", "/status/{code}") { _, parameters in
            let code = Int(parameters["code"] ?? "500") ?? 500
            return .text("failed \(code)", status: code)
        }
        router.on("GET", "/json") { _, _ in .json(#"{"code":7,"msg":"no such file"}"#) }
        router.on("POST", "/multipart") { request, _ in
            guard let parts = MultipartParser.parse(request) else { return .text("unparsable", status: 400) }
            // Large parts are verified by the test itself (a byte-wise digest is slow in debug builds).
            return .text(
                parts.map { part in
                    let digest = part.body.count <= 64 * 1024 * 1024 ? fnv1a(part.body) : "-"
                    return "\(part.name)|\(part.fileName ?? "-")|\(part.contentType ?? "-")|\(part.body.count)|\(digest)"
                }.joined(separator: "\n"))
        }
        for method in ["PUT", "POST"] {
            router.on(method, "/flaky-upload") { request, _ in
                hits.add(1)
                if hits.value == 1 { return .text("busy", status: 503) }
                return .text("\(request.body.count) \(fnv1a(request.body))")
            }
        }
        return router
    }

    /// The `/file` route.
    static func serveFile(_ request: ServerRequest, state: ServedFileState) -> ServerResponse {
        let length = Int(request.queryValue("n") ?? "0") ?? 0
        let behaviour = state.behaviour.withLock { current in
            defer { current.cutOnce = nil }
            return current
        }
        let etag = behaviour.etag ?? request.queryValue("etag")
        let lastModified = request.queryValue("lastmod")
        var headers: [(name: String, value: String)] = [("Content-Type", request.queryValue("type") ?? "application/octet-stream")]
        if let etag { headers.append(("ETag", etag)) }
        if let lastModified { headers.append(("Last-Modified", lastModified)) }
        if let disposition = request.queryValue("cd") { headers.append(("Content-Disposition", disposition)) }
        let validator = etag ?? lastModified
        if let range = request.header("Range"), range.hasPrefix("bytes="), range.hasSuffix("-"),
            let start = Int(range.dropFirst(6).dropLast()),
            behaviour.ignoresIfRange || request.header("If-Range") == nil || request.header("If-Range") == validator
        {
            if start >= length {
                return ServerResponse(status: 416, headers: headers + [("Content-Range", "bytes */\(length)")], body: [])
            }
            let asked = request.queryValue("badrange") == "1" || behaviour.badRange ? start + 1 : start
            let first = max(0, asked - behaviour.startsEarlyBy)
            let end = behaviour.partSize.map { min(length, first + $0) } ?? length
            if behaviour.rangesWithoutValidators {
                headers.removeAll { $0.name == "ETag" || $0.name == "Last-Modified" }
            }
            if behaviour.rangesWithoutNameOrType {
                headers.removeAll { $0.name == "Content-Disposition" || $0.name == "Content-Type" }
            }
            headers.append(("Content-Range", "bytes \(first)-\(end - 1)/\(length + behaviour.extraTotal)"))
            headers.append(("Content-Length", String(end - first)))
            let cut = behaviour.cutOnce
            return .stream(status: 206, headers: headers) { writer in
                try await writePattern(from: first, to: cut.map { first + $0 } ?? end, writer)
                if cut != nil { throw CancellationError() }
            }
        }
        headers.append(("Content-Length", String(length)))
        let cut = behaviour.cutOnce ?? request.queryValue("cut").flatMap { Int($0) }
        return .stream(headers: headers) { writer in
            try await writePattern(from: 0, to: cut ?? length, writer)
            if cut != nil { throw CancellationError() }
        }
    }

    /// Writes the pattern's bytes `start..<end` (the bytes a full body has at those offsets).
    static func writePattern(from start: Int, to end: Int, _ writer: ResponseBodyWriter) async throws {
        var offset = start
        while offset < end {
            let index = offset / PatternBody.blockSize
            let inBlock = offset % PatternBody.blockSize
            let count = min(PatternBody.blockSize - inBlock, end - offset)
            try await writer.write(Array(PatternBody.block(index)[inBlock..<(inBlock + count)]))
            offset += count
        }
    }
}

/// What the `/file` route does, changed by a test between requests.
final class ServedFileState: Sendable {
    struct Behaviour: Sendable {
        /// The current `ETag` (overrides the query's).
        var etag: String?
        /// Cut the next answer after this many body bytes (then reset).
        var cutOnce: Int?
        /// Answer ranges even when `If-Range` does not match.
        var ignoresIfRange = false
        /// Answer ranges starting one byte late.
        var badRange = false
        /// Announce a complete length this much larger in `Content-Range`.
        var extraTotal = 0
        /// Answer ranges starting this many bytes before the byte asked for.
        var startsEarlyBy = 0
        /// Answer a range with at most this many bytes (a server that sends files in parts).
        var partSize: Int?
        /// Answer ranges without `ETag` or `Last-Modified`.
        var rangesWithoutValidators = false
        /// Answer ranges without `Content-Disposition` or `Content-Type`.
        var rangesWithoutNameOrType = false
    }

    let behaviour = Mutex(Behaviour())

    func update(_ change: (inout Behaviour) -> Void) { behaviour.withLock { change(&$0) } }
}

/// A minimal `multipart/form-data` parser for the test server (the whole body is in memory).
enum MultipartParser {
    struct Part {
        var name: String
        var fileName: String?
        var contentType: String?
        var headers: [String]
        var body: ArraySlice<UInt8>
    }

    static func parse(_ request: ServerRequest) -> [Part]? {
        guard let type = request.header("Content-Type"), let range = type.range(of: "boundary=") else { return nil }
        let boundary = Array(("--" + type[range.upperBound...]).utf8)
        let body = request.body
        var parts: [Part] = []
        guard var position = find(boundary, in: body, from: 0) else { return nil }
        while true {
            position += boundary.count
            if body[position..<min(body.count, position + 2)].elementsEqual("--".utf8) { return parts }
            position += 2  // CRLF
            guard let headEnd = find(Array("\r\n\r\n".utf8), in: body, from: position) else { return nil }
            let headers = String(decoding: body[position..<headEnd], as: UTF8.self).components(separatedBy: "\r\n")
            let contentStart = headEnd + 4
            guard let next = find(Array("\r\n".utf8) + boundary, in: body, from: contentStart) else { return nil }
            var part = Part(name: "", headers: headers, body: body[contentStart..<next])
            for header in headers {
                let lower = header.lowercased()
                if lower.hasPrefix("content-type:") { part.contentType = header.dropFirst(13).trimmingCharacters(in: .whitespaces) }
                if lower.hasPrefix("content-disposition:") {
                    part.name = quoted("name", in: header) ?? ""
                    part.fileName = quoted("filename", in: header)
                }
            }
            parts.append(part)
            position = next + 2
        }
    }

    private static func quoted(_ key: String, in header: String) -> String? {
        guard let range = header.range(of: "; \(key)=\"") else { return nil }
        let rest = header[range.upperBound...]
        guard let end = rest.firstIndex(of: "\"") else { return nil }
        return String(rest[..<end])
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int) -> Int? {
        guard start <= haystack.count else { return nil }
        return haystack.withUnsafeBytes { hay -> Int? in
            needle.withUnsafeBytes { pattern -> Int? in
                guard let base = hay.baseAddress, let patternBase = pattern.baseAddress, let first = needle.first else { return nil }
                var index = start
                while index + pattern.count <= hay.count {
                    guard let hit = memchr(base + index, Int32(first), hay.count - index - pattern.count + 1) else { return nil }
                    let position = base.distance(to: UnsafeRawPointer(hit))
                    if memcmp(base + position, patternBase, pattern.count) == 0 { return position }
                    index = position + 1
                }
                return nil
            }
        }
    }
}

/// A fresh empty directory in the temporary directory.
func temporaryDirectory(_ name: String) throws -> URL {
    let url = URL(fileURLWithPath: NSTemporaryDirectory()).appendingPathComponent("curlew-\(name)-\(UUID().uuidString)", isDirectory: true)
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    return url
}

/// The names in a directory, sorted (hidden ones included).
func contents(of directory: URL) -> [String] {
    ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted()
}

/// SHA-256 of a file, read in pieces, as lower-case hex.
func sha256(ofFile path: String) throws -> String {
    let handle = try FileHandle(forReadingFrom: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    var hasher = SHA256()
    while let chunk = try handle.read(upToCount: 1 << 20), !chunk.isEmpty { hasher.update(data: chunk) }
    return hasher.finalize().map { String(format: "%02x", $0) }.joined()
}

/// SHA-256 of the first `length` pattern bytes, as lower-case hex.
func sha256(ofPattern length: Int) -> String {
    var hasher = SHA256()
    var offset = 0
    var index = 0
    while offset < length {
        let count = min(PatternBody.blockSize, length - offset)
        hasher.update(data: PatternBody.block(index, count: count))
        offset += count
        index += 1
    }
    return hasher.finalize().map { String(format: "%02x", $0) }.joined()
}

/// An endpoint for any path.
struct FileGet: Endpoint {
    typealias Response = Data
    var path: String
}

/// Open descriptors of this process that point into `directory`.
func openDescriptors(into directory: URL) -> [String] {
    let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
    return fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") }
        .filter { $0.hasPrefix(directory.path) }
}
