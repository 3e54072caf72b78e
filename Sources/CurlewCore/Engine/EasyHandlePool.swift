internal import CCurlShim
internal import Synchronization

/// Easy handles kept for reuse, so a request does not pay for `curl_easy_init`, libcurl's
/// per-handle allocations, or setting the same options again. A handle comes back with the
/// settings it was configured with (``PooledEasyHandle``, ``EasyHandleSettings``); one whose
/// configuration failed midway is reset (`curl_easy_reset`, which keeps the DNS and TLS session
/// caches). Any thread may take one; only one thread uses it at a time.
package final class EasyHandlePool: Sendable {
    /// Idle handles, guarded by the mutex.
    private let idle = Mutex<[PooledEasyHandle]>([])
    private let capacity: Int
    /// What every handle of the pool's engine carries.
    private let setup: EngineHandleSetup

    package init(capacity: Int, setup: EngineHandleSetup = EngineHandleSetup()) {
        self.capacity = capacity
        self.setup = setup
    }

    deinit {
        for pooled in idle.withLock({ $0 }) { pooled.cleanup() }
    }

    /// A handle from the pool, or a new one; `nil` if libcurl cannot allocate one.
    package func take() -> PooledEasyHandle? {
        if let pooled = idle.withLock({ $0.popLast() }) { return pooled }
        return PooledEasyHandle.make(setup: setup)
    }

    /// Handles kept now (tests and statistics).
    package var idleCount: Int { idle.withLock { $0.count } }

    /// Frees every kept handle, with its buffers and header list (the engine's housekeeping,
    /// once the engine was quiet for the pool idle timeout). Returns how many were freed.
    @discardableResult
    package func trim() -> Int {
        let freed = idle.withLock { idle -> [PooledEasyHandle] in
            defer { idle = [] }
            return idle
        }
        for pooled in freed { pooled.cleanup() }
        return freed.count
    }

    /// Keeps a handle that is no longer attached to a multi handle (reset first when its settings
    /// are unknown), or frees it when the pool is full.
    package func recycle(_ pooled: PooledEasyHandle) {
        if pooled.settings == nil { pooled.reset() }
        let kept = idle.withLock { idle -> Bool in
            guard idle.count < capacity else { return false }
            idle.append(pooled)
            return true
        }
        if !kept { pooled.cleanup() }
    }
}
