internal import Synchronization
internal import CTSanHooks

/// `Synchronization.Mutex` whose lock hand-over ThreadSanitizer can see; used only in
/// ThreadSanitizer builds (`scripts/sanitize.sh thread` defines `CURLEW_TSAN`, and each module's
/// `Mutex+Sanitizer.swift` then makes `Mutex` mean this type).
///
/// On Linux a contended `Mutex` is handed from the releasing thread to a waiter by the kernel
/// (`FUTEX_UNLOCK_PI`/`FUTEX_LOCK_PI`), which ThreadSanitizer does not intercept, so it reports
/// the next access under the lock as a data race (scripts/sanitizers/tsan-mutex-repro.sh). Here
/// the critical section announces the acquire and the release on a byte of its own (not on the
/// value's address: taking that is itself a Swift access TSan checks before the acquire).
public struct TSanMutex<Value: ~Copyable>: ~Copyable {
    private let base: Synchronization.Mutex<Value>
    /// The address ThreadSanitizer synchronises on (a byte owned by this mutex, freed in
    /// `deinit`, never read or written: only its address matters, so it is kept as a number).
    private let token: UInt

    /// A mutex holding `initialValue`.
    public init(_ initialValue: consuming sending Value) {
        base = Synchronization.Mutex(initialValue)
        token = UInt(bitPattern: UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1))
    }

    deinit {
        UnsafeMutableRawPointer(bitPattern: token)?.deallocate()
    }

    /// Runs `body` with exclusive access to the value, as `Mutex.withLock` does.
    public borrowing func withLock<Result: ~Copyable, E: Error>(
        _ body: (inout sending Value) throws(E) -> sending Result
    ) throws(E) -> sending Result {
        let token = UnsafeMutableRawPointer(bitPattern: self.token)
        return try base.withLock { (value: inout sending Value) throws(E) -> sending Result in
            curlew_tsan_acquire(token)
            defer { curlew_tsan_release(token) }
            return try body(&value)
        }
    }
}

extension TSanMutex: Sendable where Value: ~Copyable {}
