/// Something an app may want to react to, published on ``Client/events``.
public enum ClientEvent: Sendable, Hashable {
    /// The server ended the session (a configured business code such as 802, or a forced-logout
    /// status); the credential was cleared. Log the user out.
    case sessionEnded(reason: String)
    /// The credential was refreshed to a new version.
    case credentialRefreshed(version: Int)
}

/// The publishing side of a client's event stream; `Sendable`, cheap to copy.
public struct ClientEvents: Sendable {
    /// The stream to observe (one consumer).
    public let stream: AsyncStream<ClientEvent>
    private let continuation: AsyncStream<ClientEvent>.Continuation

    /// Creates a stream that keeps the newest 64 events when nobody reads.
    public init() {
        (stream, continuation) = AsyncStream.makeStream(of: ClientEvent.self, bufferingPolicy: .bufferingNewest(64))
    }

    /// Publishes an event.
    public func publish(_ event: ClientEvent) {
        continuation.yield(event)
    }
}
