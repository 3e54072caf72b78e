// Minimal reproduction: does ThreadSanitizer see Synchronization.Mutex on Linux?
//
//     bash scripts/sanitizers/tsan-mutex-repro.sh
//
// Four threads add to a counter 200 000 times each, every access inside `withLock`. The program is
// race-free by construction (the total is always exact). Built three ways:
//   plain       Synchronization.Mutex                          → TSan reports data races
//   pthread     the same counter under pthread_mutex_t         → clean
//   annotated   Mutex + __tsan_acquire/__tsan_release inside   → clean (what TSanMutex does)
// Why: on Linux Mutex's uncontended path is an atomic compare-exchange inlined into the caller
// (instrumented, so TSan sees it), but a contended lock is handed over by the kernel
// (FUTEX_LOCK_PI / FUTEX_UNLOCK_PI syscalls), which TSan does not intercept: the waiter gets the
// lock with no happens-before edge TSan can see, and the next access is reported as a race.
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

#if ANNOTATED
@_silgen_name("__tsan_acquire") func tsanAcquire(_ address: UnsafeMutableRawPointer)
@_silgen_name("__tsan_release") func tsanRelease(_ address: UnsafeMutableRawPointer)
#endif

final class Counter: @unchecked Sendable {  // `value` guarded by `lock` / `mutex`
    #if PTHREAD
    var mutex = pthread_mutex_t()
    var value = 0
    init() { pthread_mutex_init(&mutex, nil) }
    func add() {
        pthread_mutex_lock(&mutex)
        value += 1
        pthread_mutex_unlock(&mutex)
    }
    var total: Int { pthread_mutex_lock(&mutex); defer { pthread_mutex_unlock(&mutex) }; return value }
    #else
    let lock = Mutex(0)
    #if ANNOTATED
    // The address TSan synchronises on. Not the value's own address: taking it is itself a Swift
    // access to the value, which TSan would check before the acquire is announced.
    let token = UnsafeMutableRawPointer.allocate(byteCount: 1, alignment: 1)
    #endif
    func add() {
        lock.withLock { value in
            #if ANNOTATED
            tsanAcquire(token)
            defer { tsanRelease(token) }
            #endif
            value += 1
        }
    }
    var total: Int { lock.withLock { $0 } }
    #endif
}

let counter = Counter()
let threads = 4, iterations = 200_000
var ids: [pthread_t] = []
for _ in 0..<threads {
    var thread = pthread_t()
    let box = Unmanaged.passRetained(counter).toOpaque()
    pthread_create(&thread, nil, { raw in
        let counter = Unmanaged<Counter>.fromOpaque(raw!).takeRetainedValue()
        for _ in 0..<200_000 { counter.add() }
        return nil
    }, box)
    ids.append(thread)
}
for thread in ids { pthread_join(thread, nil) }
print("total \(counter.total) of \(threads * iterations)")
