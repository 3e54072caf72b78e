internal import Curlew
internal import Synchronization

/// How a call to the store under a soft timeout ended.
enum StoreOutcome<Value: Sendable>: Sendable {
    case answered(Value)
    case failed(any Error)
    case timedOut
}

/// Runs `operation` in a task of its own and returns its outcome, or ``StoreOutcome/timedOut``
/// once `timeout` has passed, whichever comes first. The caller never waits for an operation
/// that does not answer (a store whose connection hangs): the operation goes on unobserved and
/// its late result is dropped. Structured concurrency cannot do this — a task group waits for
/// every child, cancelled or not — hence the two unstructured tasks.
func withSoftTimeout<Value: Sendable>(_ timeout: Duration, _ operation: @escaping @Sendable () async throws -> Value) async -> StoreOutcome<Value> {
    await withCheckedContinuation { (continuation: CheckedContinuation<StoreOutcome<Value>, Never>) in
        let once = ResumeOnce(continuation)
        let timer = Task {
            try? await CallDeadline.sleep(for: timeout)
            once.resume(.timedOut)
        }
        Task {
            let outcome: StoreOutcome<Value>
            do {
                outcome = .answered(try await operation())
            } catch {
                outcome = .failed(error)
            }
            if once.resume(outcome) { timer.cancel() }
        }
    }
}

/// A continuation resumed by whichever of two tasks comes first. `Sendable` through the `Mutex`
/// guarding the continuation.
final class ResumeOnce<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, Never>?>

    init(_ continuation: CheckedContinuation<Value, Never>) {
        self.continuation = Mutex(continuation)
    }

    /// Resumes with `value` unless already resumed; returns whether this call did.
    @discardableResult
    func resume(_ value: Value) -> Bool {
        guard
            let continuation = continuation.withLock({ slot in
                defer { slot = nil }; return slot
            })
        else { return false }
        continuation.resume(returning: value)
        return true
    }
}

/// The subscribers of a store's invalidations. `Sendable` through the `Mutex` guarding the
/// continuations.
final class InvalidationBroadcast: Sendable {
    private let continuations = Mutex<[UInt64: AsyncStream<FleetInvalidation>.Continuation]>([:])
    private let nextID = Atomic<UInt64>(0)

    /// A new subscription, ended by ``finish()`` or when its consumer goes away.
    func subscribe() -> AsyncStream<FleetInvalidation> {
        let (stream, continuation) = AsyncStream<FleetInvalidation>.makeStream()
        let id = nextID.add(1, ordering: .relaxed).newValue
        continuations.withLock { $0[id] = continuation }
        continuation.onTermination = { [weak self] _ in self?.continuations.withLock { _ = $0.removeValue(forKey: id) } }
        return stream
    }

    func publish(_ invalidation: FleetInvalidation) {
        for continuation in continuations.withLock({ Array($0.values) }) { continuation.yield(invalidation) }
    }

    func finish() {
        let ended = continuations.withLock { continuations in
            defer { continuations = [:] }
            return Array(continuations.values)
        }
        ended.forEach { $0.finish() }
    }
}
