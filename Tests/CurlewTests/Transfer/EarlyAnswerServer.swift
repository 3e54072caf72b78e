import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// A one-connection TCP server on 127.0.0.1 that answers as soon as the request head arrived —
/// without reading the body — then closes the connection (as a server refusing a too-large
/// upload with `413` does). The loopback server reads whole requests first, so it cannot do this.
final class EarlyAnswerServer: Sendable {
    let port: Int
    private let socket: Int32

    /// Starts listening; `answer` is written after the request head.
    init(answer: String) throws {
        let (fd, port) = try ListeningSocket.open(backlog: 4)
        self.port = port
        socket = fd
        Thread.detachNewThread {
            let connection = accept(fd, nil, nil)
            guard connection >= 0 else { return }
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 4096)
            while !received.contains(13) || String(decoding: received, as: UTF8.self).range(of: "\r\n\r\n") == nil {
                let count = buffer.withUnsafeMutableBytes { read(connection, $0.baseAddress, $0.count) }
                guard count > 0 else { break }
                received += buffer.prefix(count)
            }
            let bytes = Array(answer.utf8)
            _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            usleep(50_000)
            close(connection)
        }
    }

    /// Stops listening.
    func stop() { shutdown(socket, Int32(SHUT_RDWR)); close(socket) }
}
