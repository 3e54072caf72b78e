/// Something that happened in a ``QueueActor``, published on ``QueueActor/events``.
public enum QueueEvent: Sendable, Hashable {
    /// The named queue has nothing running and nothing waiting (HAccess `queue:finish:`).
    case drained(String)
    /// The named queue was held: new work waits until it is resumed.
    case held(String)
    /// The named queue was resumed.
    case resumed(String)
}
