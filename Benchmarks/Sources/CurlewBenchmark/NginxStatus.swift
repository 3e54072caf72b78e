import Foundation
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Reads the `accepts` counter (connections nginx has accepted) from its `stub_status` page.
///
/// Each read uses one plain blocking TCP connection with `Connection: close`, never a client
/// under test. nginx counts that connection before it answers, so a reading includes its own
/// connection: connections a client opened between two readings are `after - before - 1`.
struct NginxStatus: Sendable {
    let host: String
    let port: UInt16
    let path: String

    init(url: String) throws(StatusError) {
        guard let components = URLComponents(string: url), components.scheme == "http",
            let host = components.host, IPv4Literal(host) != nil
        else { throw StatusError("the status URL must be http:// on an IPv4 literal such as 127.0.0.1: \(url)") }
        self.host = host
        self.port = UInt16(clamping: components.port ?? 80)
        self.path = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
    }

    /// The current `accepts` value, including the connection used to read it.
    func accepts() throws(StatusError) -> Int {
        let page = try fetch()
        // "Active connections: 1 \nserver accepts handled requests\n 12 12 40 \nReading: ..."
        let lines = page.split(whereSeparator: \.isNewline)
        guard let header = lines.firstIndex(where: { $0.contains("server accepts handled requests") }),
            header + 1 < lines.count,
            let first = lines[header + 1].split(separator: " ").first,
            let accepts = Int(first)
        else { throw StatusError("unexpected stub_status page: \(page.prefix(200))") }
        return accepts
    }

    private func fetch() throws(StatusError) -> String {
        guard let address = IPv4Literal(host) else { throw StatusError("not an IPv4 address: \(host)") }
        #if canImport(Glibc)
        let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let descriptor = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard descriptor >= 0 else { throw StatusError("socket: \(String(cString: strerror(errno)))") }
        defer { close(descriptor) }

        var socketAddress = sockaddr_in()
        socketAddress.sin_family = sa_family_t(AF_INET)
        socketAddress.sin_port = port.bigEndian
        socketAddress.sin_addr = address.inAddr
        let connected = withUnsafePointer(to: &socketAddress) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else { throw StatusError("connect to \(host):\(port): \(String(cString: strerror(errno)))") }

        let request = Array("GET \(path) HTTP/1.1\r\nHost: \(host):\(port)\r\nConnection: close\r\n\r\n".utf8)
        var sent = 0
        while sent < request.count {
            let written = request[sent...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            guard written > 0 else { throw StatusError("write: \(String(cString: strerror(errno)))") }
            sent += written
        }
        var response: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            guard count >= 0 else { throw StatusError("read: \(String(cString: strerror(errno)))") }
            if count == 0 { break }
            response += buffer[0..<count]
            guard response.count < 65_536 else { throw StatusError("the status response is too large") }
        }
        let text = String(decoding: response, as: UTF8.self)
        guard text.hasPrefix("HTTP/1.1 200") || text.hasPrefix("HTTP/1.0 200") else {
            throw StatusError("the status page did not answer 200: \(text.prefix(100))")
        }
        return text
    }

    /// The status page could not be read.
    struct StatusError: Error, CustomStringConvertible {
        let description: String
        init(_ description: String) { self.description = description }
    }
}

/// A dotted-quad IPv4 address.
private struct IPv4Literal {
    let inAddr: in_addr

    init?(_ text: String) {
        var address = in_addr()
        guard inet_pton(AF_INET, text, &address) == 1 else { return nil }
        inAddr = address
    }
}
