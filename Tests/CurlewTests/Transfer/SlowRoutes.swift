import Foundation
import LoopbackServer

/// Slow answers for the lock and stall tests, added to ``FileTransferRoutes``'s router.
///
/// `GET /hold?after=M`: announces 1 GiB, sends M pattern bytes (M may be 0: the head and
/// nothing), then waits for the client to go.
/// `GET /drip?n=N&chunk=C&every=MS`: announces N bytes and sends them C bytes at a time, one
/// chunk every MS milliseconds.
enum SlowRoutes {
    static func router(state: ServedFileState = ServedFileState()) -> LoopbackRouter {
        var router = FileTransferRoutes.router(state: state)
        router.on("GET", "/hold") { request, _ in
            let sent = Int(request.queryValue("after") ?? "0") ?? 0
            return .stream(headers: [("Content-Length", String(1 << 30)), ("Content-Type", "application/octet-stream")]) { writer in
                try await PatternBody.write(sent, to: writer)
                await request.connection.closed()
            }
        }
        router.on("GET", "/drip") { request, _ in
            let length = Int(request.queryValue("n") ?? "0") ?? 0
            let chunk = max(1, Int(request.queryValue("chunk") ?? "1") ?? 1)
            let every = Int(request.queryValue("every") ?? "100") ?? 100
            return .stream(headers: [("Content-Length", String(length)), ("Content-Type", "application/octet-stream")]) { writer in
                var offset = 0
                while offset < length {
                    try await Task.sleep(for: .milliseconds(every))
                    let count = min(chunk, length - offset)
                    try await FileTransferRoutes.writePattern(from: offset, to: offset + count, writer)
                    offset += count
                }
            }
        }
        return router
    }
}
