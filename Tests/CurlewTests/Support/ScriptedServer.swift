import Foundation
import Synchronization
#if canImport(Glibc)
    import Glibc
#endif

/// A raw TCP server on 127.0.0.1 that answers each request with bytes a script chooses —
/// including bytes no HTTP server would send (broken framing, garbage status lines) and
/// connections closed without an answer. Test-only; one thread per connection, blocking I/O.
///
/// Requests are read as a head plus a `Content-Length` body. Every request is recorded with the
/// index of the connection it came on, so tests can tell whether a connection was reused.
final class ScriptedServer: Sendable {
    /// One request as the server read it.
    struct Request: Sendable {
        /// 0-based index of the connection it arrived on.
        var connection: Int
        /// `"POST /path HTTP/1.1"`.
        var requestLine: String
        /// Header lines as received, without the request line.
        var headerLines: [String]
        /// The body bytes.
        var body: Data

        var method: String { String(requestLine.split(separator: " ").first ?? "") }
        var path: String { requestLine.split(separator: " ").dropFirst().first.map(String.init) ?? "" }
        /// Every value of the header `name` (case-insensitive), in order.
        func values(_ name: String) -> [String] {
            headerLines.compactMap { line in
                guard let colon = line.firstIndex(of: ":"), line[..<colon].lowercased() == name.lowercased() else { return nil }
                return line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
        }
    }

    /// What to do with a request.
    enum Action: Sendable {
        /// Write these bytes, then keep the connection open for the next request or close it.
        case send(Data, close: Bool)
        /// Close the connection without writing anything.
        case closeWithoutAnswer
    }

    /// Decides the answer to the `index`-th request (0-based, across connections).
    typealias Script = @Sendable (_ index: Int, _ request: Request) -> Action

    let port: Int
    private let listener: Int32
    private let script: Script
    private let state = Mutex(State())

    private struct State {
        var requests: [Request] = []
        var connections = 0
        var sockets: [Int32] = []
        var stopped = false
        /// Whether `listener` is still open: once the accept loop closed it, its number may belong
        /// to another socket (a libcurl connection of a parallel test), which `stop()` must not
        /// shut down.
        var listening = true
    }

    /// The requests read so far.
    var requests: [Request] { state.withLock { $0.requests } }
    /// Connections accepted so far.
    var connectionCount: Int { state.withLock { $0.connections } }
    /// `http://127.0.0.1:<port>`.
    var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Listens on a free port and starts accepting.
    convenience init(script: @escaping Script) throws {
        let (fd, port) = try ListeningSocket.open(backlog: 16)
        self.init(listener: fd, port: port, script: script)
    }

    /// Accepts on `listener`, a socket already listening on `port` (the server closes it).
    init(listener fd: Int32, port: Int, script: @escaping Script) {
        self.port = port
        self.listener = fd
        self.script = script
        let server = self
        Thread.detachNewThread { server.acceptLoop() }
    }

    /// Stops accepting and closes every connection.
    func stop() {
        // Under the lock: a connection closes its socket (and leaves `sockets`) under it too, so a
        // descriptor number another server reused is never shut down here.
        state.withLock { state in
            state.stopped = true
            for socket in state.sockets { Glibc.shutdown(socket, Int32(SHUT_RDWR)) }
            if state.listening { Glibc.shutdown(listener, Int32(SHUT_RDWR)) }
        }
    }

    private func acceptLoop() {
        defer {
            state.withLock { state in
                state.listening = false
                close(listener)
            }
        }
        while true {
            let connection = accept(listener, nil, nil)
            guard connection >= 0 else { return }
            let index = state.withLock { state -> Int? in
                if state.stopped { return nil }
                state.sockets.append(connection)
                state.connections += 1
                return state.connections - 1
            }
            guard let index else {
                close(connection)
                return
            }
            let server = self
            Thread.detachNewThread { server.serve(connection, index: index) }
        }
    }

    private func serve(_ connection: Int32, index: Int) {
        defer {
            state.withLock { state in
                state.sockets.removeAll { $0 == connection }
                close(connection)
            }
        }
        var buffer = Data()
        while let request = Self.readRequest(connection, buffer: &buffer, connectionIndex: index) {
            let number = state.withLock { state -> Int in
                state.requests.append(request)
                return state.requests.count - 1
            }
            switch script(number, request) {
            case .closeWithoutAnswer:
                return
            case .send(let bytes, let closeAfter):
                Self.write(connection, bytes)
                if closeAfter {
                    Glibc.shutdown(connection, Int32(SHUT_WR))
                    // Let the peer read everything before the socket goes away.
                    var sink = [UInt8](repeating: 0, count: 4096)
                    while recv(connection, &sink, sink.count, 0) > 0 {}
                    return
                }
            }
        }
    }

    private static func readRequest(_ connection: Int32, buffer: inout Data, connectionIndex: Int) -> Request? {
        let separator = Data("\r\n\r\n".utf8)
        var chunk = [UInt8](repeating: 0, count: 65536)
        while buffer.range(of: separator) == nil {
            let count = recv(connection, &chunk, chunk.count, 0)
            guard count > 0 else { return nil }
            buffer.append(contentsOf: chunk[0..<count])
        }
        guard let end = buffer.range(of: separator) else { return nil }
        let head = String(decoding: buffer[buffer.startIndex..<end.lowerBound], as: UTF8.self)
        buffer = Data(buffer[end.upperBound...])
        var lines = head.components(separatedBy: "\r\n")
        let requestLine = lines.removeFirst()
        var request = Request(connection: connectionIndex, requestLine: requestLine, headerLines: lines, body: Data())
        let length = request.values("Content-Length").first.flatMap { Int($0) } ?? 0
        while buffer.count < length {
            let count = recv(connection, &chunk, chunk.count, 0)
            guard count > 0 else { return nil }
            buffer.append(contentsOf: chunk[0..<count])
        }
        request.body = Data(buffer.prefix(length))
        buffer = Data(buffer.dropFirst(length))
        return request
    }

    private static func write(_ connection: Int32, _ bytes: Data) {
        bytes.withUnsafeBytes { raw in
            var offset = 0
            while offset < raw.count, let base = raw.baseAddress {
                let written = send(connection, base + offset, raw.count - offset, Int32(MSG_NOSIGNAL))
                if written <= 0 { return }
                offset += written
            }
        }
    }
}

extension ScriptedServer.Action {
    /// A complete `200` with `body` on a kept-alive connection.
    static func ok(_ body: String = "ok") -> Self {
        .send(Data("HTTP/1.1 200 OK\r\nContent-Length: \(body.utf8.count)\r\nContent-Type: text/plain\r\n\r\n\(body)".utf8), close: false)
    }

    /// These exact bytes, then close.
    static func raw(_ text: String) -> Self { .send(Data(text.utf8), close: true) }
}
