import Foundation
#if canImport(Glibc)
    import Glibc
#endif

/// A listening socket on 127.0.0.1 that never accepts and whose backlog is full, so a new
/// connect never completes (the kernel drops the SYN): a connect timeout without the internet.
package final class BlackholeListener: Sendable {
    /// The port it listens on.
    package let port: Int
    private let sockets: [Int32]

    /// Listens on a free port and fills the accept queue.
    package init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EIO) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 0) == 0 else {
            Glibc.close(fd)
            throw POSIXError(.EADDRINUSE)
        }
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        port = Int(UInt16(bigEndian: address.sin_port))
        var all = [fd]
        // Fill the accept queue (backlog 0 holds one) with connects nobody accepts.
        for _ in 0..<4 {
            let filler = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
            guard filler >= 0 else { continue }
            _ = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(filler, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            all.append(filler)
        }
        sockets = all
        // Let the handshakes of the fillers settle.
        usleep(100_000)
    }

    /// `http://127.0.0.1:<port>`.
    package var baseURL: String { "http://127.0.0.1:\(port)" }

    /// Closes the listener and the filler connections.
    package func close() {
        for socket in sockets { Glibc.close(socket) }
    }
}
