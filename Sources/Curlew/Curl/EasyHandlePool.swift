internal import CCurlShim
internal import Synchronization

/// Easy handles kept for reuse, so a request does not pay for `curl_easy_init` and libcurl's
/// per-handle allocations. A handle comes back reset (`curl_easy_reset`, which keeps the DNS and
/// TLS session caches) and can be taken by any thread; only one thread uses it at a time.
final class EasyHandlePool: Sendable {
    /// Idle handles as bit patterns (raw pointers are not `Sendable`), guarded by the mutex.
    private let idle = Mutex<[UInt]>([])
    private let capacity: Int

    init(capacity: Int) {
        self.capacity = capacity
    }

    deinit {
        for bits in idle.withLock({ $0 }) {
            if let handle = UnsafeMutableRawPointer(bitPattern: bits) { curl_easy_cleanup(handle) }
        }
    }

    /// A reset handle from the pool, or a new one; `nil` if libcurl cannot allocate one.
    func take() -> UnsafeMutableRawPointer? {
        if let bits = idle.withLock({ $0.popLast() }), let handle = UnsafeMutableRawPointer(bitPattern: bits) {
            return handle
        }
        return curl_easy_init()
    }

    /// Resets a handle that is no longer attached to a multi handle and keeps it, or frees it when
    /// the pool is full.
    func recycle(_ handle: UnsafeMutableRawPointer) {
        curl_easy_reset(handle)
        let kept = idle.withLock { idle -> Bool in
            guard idle.count < capacity else { return false }
            idle.append(UInt(bitPattern: handle))
            return true
        }
        if !kept { curl_easy_cleanup(handle) }
    }
}
