/// How many bytes of one transfer have moved: the request body sent and the response body
/// received, each with its total when known.
///
/// The engine reports it in `ClientEvent.progress` events; a `TransferProgressMonitor` and
/// `Accessory.didProgress(_:progress:)` deliver the same value for one call, throttled and
/// monotonic, with a resumed download's bytes already on disk counted as received. An upload
/// reads ``fractionSent``, a download ``fractionReceived``; a bar that draws either kind of call
/// uses `progress.fractionSent ?? progress.fractionReceived` (a call without a request body has
/// no ``totalBytesToSend``).
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

    /// Received fraction in 0…1 when the size is known (1 for an empty body).
    public var fractionReceived: Double? {
        guard let total = totalBytesToReceive else { return nil }
        guard total > 0 else { return 1 }
        return min(1, Double(bytesReceived) / Double(total))
    }

    /// Sent fraction in 0…1 when the size is known (1 for an empty body).
    public var fractionSent: Double? {
        guard let total = totalBytesToSend else { return nil }
        guard total > 0 else { return 1 }
        return min(1, Double(bytesSent) / Double(total))
    }

    /// Whether neither counter is behind `other`'s.
    package func isAtLeast(_ other: TransferProgress) -> Bool {
        bytesSent >= other.bytesSent && bytesReceived >= other.bytesReceived
    }
}
