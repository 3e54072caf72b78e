/// One value of a ``TransferProgressMonitor``: how far the transfer a call watches has come.
public struct TransferProgressUpdate: Sendable, Hashable {
    /// Which side of the exchange ``bytesDone`` counts.
    public enum Direction: Sendable, Hashable {
        /// The request body (an upload).
        case upload
        /// The response body (a download).
        case download
    }

    /// Which side ``bytesDone`` counts: the request body when the call sends one, else the
    /// response body.
    public var direction: Direction
    /// Bytes moved so far (for a resumed download, counting the bytes already on disk).
    public var bytesDone: Int64
    /// The total, when known.
    public var bytesExpected: Int64?

    /// Creates a value.
    public init(direction: Direction, bytesDone: Int64, bytesExpected: Int64?) {
        self.direction = direction
        self.bytesDone = bytesDone
        self.bytesExpected = bytesExpected
    }

    /// ``bytesDone`` over ``bytesExpected`` in 0…1, when the total is known (1 for an empty body).
    public var fraction: Double? {
        guard let bytesExpected else { return nil }
        guard bytesExpected > 0 else { return 1 }
        return min(1, Double(bytesDone) / Double(bytesExpected))
    }
}
