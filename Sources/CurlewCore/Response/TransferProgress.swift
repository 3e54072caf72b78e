/// How many bytes of one transfer have moved, as libcurl counts them.
public struct TransferProgress: Sendable, Hashable {
    /// Request body bytes sent so far.
    public var bytesSent: Int64
    /// Request body size, when known.
    public var totalBytesToSend: Int64?
    /// Response body bytes received so far, as libcurl counts them: bytes on the wire, before
    /// any content decoding (gzip, deflate, br, zstd).
    public var bytesReceived: Int64
    /// Response body size announced by the server, when known.
    public var totalBytesToReceive: Int64?

    /// Creates a progress value.
    public init(bytesSent: Int64 = 0, totalBytesToSend: Int64? = nil, bytesReceived: Int64 = 0, totalBytesToReceive: Int64? = nil) {
        self.bytesSent = bytesSent
        self.totalBytesToSend = totalBytesToSend
        self.bytesReceived = bytesReceived
        self.totalBytesToReceive = totalBytesToReceive
    }

    /// Received fraction in 0…1 when the size is known.
    public var fractionReceived: Double? {
        guard let total = totalBytesToReceive, total > 0 else { return nil }
        return min(1, Double(bytesReceived) / Double(total))
    }

    /// Sent fraction in 0…1 when the size is known.
    public var fractionSent: Double? {
        guard let total = totalBytesToSend, total > 0 else { return nil }
        return min(1, Double(bytesSent) / Double(total))
    }
}
