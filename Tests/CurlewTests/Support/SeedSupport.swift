import Curlew
import Synchronization

/// Counts from any thread; `increment()` returns the new count.
final class SeedTally: Sendable {
    private let value = Mutex(0)
    @discardableResult func increment() -> Int {
        value.withLock {
            $0 += 1; return $0
        }
    }
    var count: Int { value.withLock { $0 } }
}

/// Records values from any thread.
final class SeedLog<Value: Sendable>: Sendable {
    private let values = Mutex<[Value]>([])
    func append(_ value: Value) { values.withLock { $0.append(value) } }
    var all: [Value] { values.withLock { $0 } }
}

/// Collects the events of `kinds` until one of `until` arrives `count` times.
func seedCollect(_ events: AsyncStream<ClientEvent>, kinds: Set<ClientEvent.Kind>, until end: ClientEvent.Kind, count: Int = 1) async -> [ClientEvent] {
    var seen: [ClientEvent] = []
    var ends = 0
    for await event in events where kinds.contains(event.kind) || event.kind == end {
        seen.append(event)
        if event.kind == end {
            ends += 1
            if ends == count { break }
        }
    }
    return seen
}
