internal import CCurlShim
#if canImport(Glibc)
    internal import Glibc
#endif

/// A libcurl share handle holding one cookie store (`CURL_LOCK_DATA_COOKIE`), with the lock
/// callbacks libcurl calls around every access to it.
///
/// Easy handles attached to it run on different engine threads at once (a transport runs about
/// one engine per core, and one jar may serve several transports) and the jar's own operations
/// run on the caller's thread, so the callbacks lock for real: one `pthread_mutex_t` per
/// `curl_lock_data` kind (libcurl locks two kinds nested, never one twice). Only cookies are
/// shared: connections and the DNS cache stay in each engine's multi handle.
///
/// Thread-safety (why `@unchecked Sendable` is sound): `share` and `mutexes` are set in `init`
/// and never reassigned; everything libcurl keeps behind `share` is guarded by `mutexes`
/// through the lock callbacks.
package final class CookieShare: @unchecked Sendable {
    /// `nil` when libcurl could not allocate it.
    package let share: UnsafeMutableRawPointer?
    private let mutexes: UnsafeMutablePointer<pthread_mutex_t>
    private static let kinds = Int(CURL_LOCK_DATA_LAST.rawValue) + 1

    package init() {
        mutexes = .allocate(capacity: Self.kinds)
        for index in 0..<Self.kinds { pthread_mutex_init(mutexes + index, nil) }
        guard CurlGlobal.initialized, let share = curl_share_init() else {
            self.share = nil
            return
        }
        _ = curlew_share_setopt_pointer(share, CURLSHOPT_USERDATA, UnsafeMutableRawPointer(mutexes))
        _ = curlew_share_setopt_lock(share, CookieShareCallbacks.lock)
        _ = curlew_share_setopt_unlock(share, CookieShareCallbacks.unlock)
        guard curlew_share_setopt_long(share, CURLSHOPT_SHARE, Int(CURL_LOCK_DATA_COOKIE.rawValue)) == CURLSHE_OK else {
            curl_share_cleanup(share)
            self.share = nil
            return
        }
        self.share = share
    }

    deinit {
        // Every easy handle detached before letting go of its jar, so this succeeds.
        if let share { _ = curl_share_cleanup(share) }
        for index in 0..<Self.kinds { pthread_mutex_destroy(mutexes + index) }
        mutexes.deallocate()
    }

}

/// The share's lock callbacks (static members: see ``CurlCallbacks``).
private enum CookieShareCallbacks {
    /// `CURLSHOPT_LOCKFUNC`: locks the mutex of one kind of shared data.
    static let lock: curlew_lock_callback = { _, data, _, user in
        guard let user, Int(data.rawValue) <= Int(CURL_LOCK_DATA_LAST.rawValue) else { return }
        pthread_mutex_lock(user.assumingMemoryBound(to: pthread_mutex_t.self) + Int(data.rawValue))
    }

    /// `CURLSHOPT_UNLOCKFUNC`: unlocks it.
    static let unlock: curlew_unlock_callback = { _, data, user in
        guard let user, Int(data.rawValue) <= Int(CURL_LOCK_DATA_LAST.rawValue) else { return }
        pthread_mutex_unlock(user.assumingMemoryBound(to: pthread_mutex_t.self) + Int(data.rawValue))
    }
}
