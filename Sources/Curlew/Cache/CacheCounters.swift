internal import Synchronization

/// The counters of a ``ResponseCache``, updated from any task without a hop to the actor.
/// `Sendable` through the one `Mutex` guarding them.
final class CacheCounters: Sendable {
    private let value = Mutex(CacheStatistics())

    var current: CacheStatistics { value.withLock { $0 } }

    func record(_ change: (inout CacheStatistics) -> Void) {
        value.withLock { change(&$0) }
    }
}
