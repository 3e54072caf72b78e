import Foundation
import Synchronization
#if canImport(Glibc)
    import Glibc
#endif

/// A TCP port on 127.0.0.1 that refuses connections for as long as this value lives: a socket is
/// bound to it but never listens, so a connection is refused and, unlike a port freed by a
/// stopped server, no test running in parallel can be given it meanwhile. ``listen(script:)``
/// ends the refusal (an upstream outage and its end): the same socket becomes a server.
final class ClosedPort: Sendable {
    let port: Int
    private let descriptor: Int32
    /// Whether ``listen(script:)`` handed the socket to a server, which closes it then.
    private let handedOver = Mutex(false)

    init() throws {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw POSIXError(.EMFILE) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw POSIXError(.EADDRNOTAVAIL)
        }
        descriptor = fd
        port = Int(UInt16(bigEndian: address.sin_port))
    }

    deinit {
        if !handedOver.withLock({ $0 }) { close(descriptor) }
    }

    /// The outage ends: the socket listens and answers with `script`.
    func listen(script: @escaping ScriptedServer.Script) throws -> ScriptedServer {
        guard Glibc.listen(descriptor, 128) == 0 else { throw POSIXError(.EADDRINUSE) }
        handedOver.withLock { $0 = true }
        return ScriptedServer(listener: descriptor, port: port, script: script)
    }

    /// `http://127.0.0.1:PORT`.
    var baseURL: String { "http://127.0.0.1:\(port)" }
}
