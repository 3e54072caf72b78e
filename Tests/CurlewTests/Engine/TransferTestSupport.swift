@testable import Curlew
@testable import CurlewCore
import Foundation
import HTTPTypes
import LoopbackServer
import Synchronization
import Testing

/// A body that is cheap to generate and to verify at any size: 64 KiB blocks of a fixed
/// template whose first 8 bytes are the block's index (little endian), so a lost, repeated or
/// reordered block is caught with one `memcmp` per block.
enum PatternBody {
    /// Bytes per block.
    static let blockSize = 64 * 1024
    /// The fixed part of every block.
    static let template: [UInt8] = (0..<blockSize).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ ($0 >> 9)) }

    /// Block `index`, cut to `count` bytes.
    static func block(_ index: Int, count: Int = blockSize) -> [UInt8] {
        var bytes = template
        withUnsafeBytes(of: UInt64(index).littleEndian) { word in
            for offset in 0..<8 { bytes[offset] = word[offset] }
        }
        return count == blockSize ? bytes : Array(bytes.prefix(count))
    }

    /// The whole body of `length` bytes (small bodies only: it is in memory).
    static func bytes(_ length: Int) -> [UInt8] {
        var result: [UInt8] = []
        result.reserveCapacity(length)
        var index = 0
        while result.count < length {
            result += block(index, count: min(blockSize, length - result.count))
            index += 1
        }
        return result
    }

    /// Writes `length` bytes through `writer` in blocks.
    static func write(_ length: Int, to writer: ResponseBodyWriter, written: ByteCounter? = nil) async throws {
        var sent = 0
        var index = 0
        while sent < length {
            let count = min(blockSize, length - sent)
            try await writer.write(block(index, count: count))
            sent += count
            written?.add(count)
            index += 1
        }
    }

    /// Checks a body chunk by chunk against the pattern.
    struct Verifier {
        /// Bytes seen so far.
        private(set) var offset = 0
        /// Bytes that differ from the pattern.
        private(set) var mismatches = 0

        mutating func consume(_ data: Data) {
            data.withUnsafeBytes { raw in
                guard let base = raw.baseAddress else { return }
                var position = 0
                while position < raw.count {
                    let inBlock = offset % PatternBody.blockSize
                    let count = min(raw.count - position, PatternBody.blockSize - inBlock)
                    var checked = 0
                    // The index word, byte by byte.
                    while checked < count, inBlock + checked < 8 {
                        let expected = UInt8(truncatingIfNeeded: UInt64(offset / PatternBody.blockSize) >> (8 * UInt64(inBlock + checked)))
                        if raw[position + checked] != expected { mismatches += 1 }
                        checked += 1
                    }
                    if checked < count {
                        let same = PatternBody.template.withUnsafeBytes { template in
                            guard let start = template.baseAddress else { return false }
                            return memcmp(base + position + checked, start + inBlock + checked, count - checked) == 0
                        }
                        if !same { mismatches += 1 }
                    }
                    position += count
                    offset += count
                }
            }
        }
    }
}

/// A counter shared between a server route and a test.
final class ByteCounter: Sendable {
    private let count = Atomic<Int>(0)
    /// The count.
    var value: Int { count.load(ordering: .relaxed) }
    /// Adds `amount`.
    func add(_ amount: Int) { count.add(amount, ordering: .relaxed) }
}

/// FNV-1a, 64 bit, in lower-case hex: the digest the upload route reports.
///
/// Contiguous bytes (arrays, slices, `Data`) are hashed through a buffer pointer: the generic
/// loop goes through the sequence's witnesses for every byte, which in a debug build under
/// AddressSanitizer took the upload route longer than the client's 30 s idle timeout for an
/// 8 MiB part (the server hashes before it answers, so no byte moves meanwhile).
func fnv1a(_ bytes: some Sequence<UInt8>) -> String {
    let hash =
        bytes.withContiguousStorageIfAvailable { fnv1aHash($0) }
        ?? {
            var hash = fnv1aBasis
            for byte in bytes { hash = fnv1aStep(hash, byte) }
            return hash
        }()
    return String(hash, radix: 16)
}

private let fnv1aBasis: UInt64 = 0xcbf2_9ce4_8422_2325

private func fnv1aStep(_ hash: UInt64, _ byte: UInt8) -> UInt64 {
    (hash ^ UInt64(byte)) &* 0x0000_0100_0000_01b3
}

private func fnv1aHash(_ buffer: UnsafeBufferPointer<UInt8>) -> UInt64 {
    var hash = fnv1aBasis
    for byte in buffer { hash = fnv1aStep(hash, byte) }
    return hash
}

/// Routes for the transfer tests.
enum TransferRoutes {
    /// `GET /bytes?n=N[&length=0]`: N pattern bytes, with `Content-Length` unless `length=0`
    /// (then chunked). `written` counts bytes handed to the socket.
    /// `POST|PUT|PATCH /upload`: answers `method length digest transfer-encoding content-length`.
    /// `GET /redirect/{n}`: redirects n times, then answers `done`.
    /// `GET /cut?n=N&after=M`: announces N bytes, sends M and closes the connection.
    /// `GET /stall?after=M`: sends M bytes of an announced 1 GiB, then waits for the client to go.
    static func router(written: ByteCounter? = nil) -> LoopbackRouter {
        var router = LoopbackRouter()
        router.on("GET", "/bytes") { request, _ in
            let length = Int(request.queryValue("n") ?? "0") ?? 0
            let headers: [(name: String, value: String)] = request.queryValue("length") == "0" ? [] : [("Content-Length", String(length))]
            return .stream(headers: headers) { writer in try await PatternBody.write(length, to: writer, written: written) }
        }
        for method in ["POST", "PUT", "PATCH"] {
            router.on(method, "/upload") { request, _ in
                let encoding = request.header("Transfer-Encoding") ?? "-"
                let declared = request.header("Content-Length") ?? "-"
                return .text("\(request.method) \(request.body.count) \(fnv1a(request.body)) \(encoding) \(declared)")
            }
        }
        router.on("GET", "/redirect/{n}") { _, parameters in
            let remaining = Int(parameters["n"] ?? "0") ?? 0
            return remaining > 0 ? .redirect(to: "/redirect/\(remaining - 1)") : .text("done")
        }
        router.on("GET", "/cut") { request, _ in
            let announced = Int(request.queryValue("n") ?? "0") ?? 0
            let sent = Int(request.queryValue("after") ?? "0") ?? 0
            return .stream(headers: [("Content-Length", String(announced))]) { writer in
                try await PatternBody.write(sent, to: writer)
                throw CancellationError()
            }
        }
        router.on("GET", "/stall") { request, _ in
            let sent = Int(request.queryValue("after") ?? "0") ?? 0
            return .stream(headers: [("Content-Length", String(1 << 30))]) { writer in
                try await PatternBody.write(sent, to: writer)
                await request.connection.closed()
            }
        }
        return router
    }
}

/// A context whose events go to `broadcaster` (or nowhere) and whose body goes to `body`.
func transferContext(
    for request: PreparedRequest, body: ResponseBodyDisposition = .collect, broadcaster: EventBroadcaster? = nil
) -> TransportContext {
    let id = CallID.next()
    return TransportContext(
        requestID: id, requestName: "TransferTest", identity: RequestIdentity(request, name: "TransferTest"),
        responseBody: body, events: EventReporter(broadcaster: broadcaster, requestID: id, requestName: "TransferTest"))
}

/// The resident-memory growth a bounded-memory test allows while hundreds of MiB pass through:
/// 32 MiB, or 64 MiB under AddressSanitizer (`ASAN_OPTIONS` is set: `scripts/sanitize.sh`).
/// ASan's allocator keeps freed chunks in per-size-class regions even without quarantine, and the
/// shadow (one byte per eight) of every heap page touched stays resident: a stream of 1 MiB pieces
/// measured 38.6 MB once under ASan. That growth is the allocator's, not buffering (the stream
/// test checks the buffered bytes themselves exactly), and 64 MiB still fails on a buffered body.
let residentGrowthLimit = ProcessInfo.processInfo.environment["ASAN_OPTIONS"] == nil ? 32 << 20 : 64 << 20

/// The process's resident set size in bytes (`/proc/self/statm`, second field, in pages).
func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else { return 0 }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
}

/// How much the resident set grew while `work` ran: sampled every 20 ms and once at the end,
/// measured from the size before it started.
func residentGrowth<T>(during work: () async throws -> T) async rethrows -> (value: T, growth: Int) {
    let before = residentBytes()
    let sampler = Task {
        var peak = before
        while !Task.isCancelled {
            peak = max(peak, residentBytes())
            try? await Task.sleep(for: .milliseconds(20))
        }
        return peak
    }
    let value: T
    do {
        value = try await work()
    } catch {
        sampler.cancel()
        throw error
    }
    sampler.cancel()
    return (value, max(await sampler.value, residentBytes()) - before)
}

/// A path in the temporary directory that does not exist yet.
func temporaryPath(_ name: String) -> String {
    NSTemporaryDirectory() + "curlew-\(name)-\(UUID().uuidString)"
}

/// A chunk sequence for request-body streams: `chunks` in order, optionally sleeping before each
/// and throwing after `throwAfter` chunks.
struct TestChunks: AsyncSequence, Sendable {
    typealias Element = Data
    let chunks: [Data]
    var delay: Duration? = nil
    var throwAfter: Int? = nil

    /// What a throwing sequence throws.
    struct Boom: Error {}

    struct AsyncIterator: AsyncIteratorProtocol {
        let source: TestChunks
        var index = 0

        mutating func next() async throws -> Data? {
            if let throwAfter = source.throwAfter, index == throwAfter { throw Boom() }
            guard index < source.chunks.count else { return nil }
            if let delay = source.delay { try await Task.sleep(for: delay) }
            defer { index += 1 }
            return source.chunks[index]
        }
    }

    func makeAsyncIterator() -> AsyncIterator { AsyncIterator(source: self) }
}
