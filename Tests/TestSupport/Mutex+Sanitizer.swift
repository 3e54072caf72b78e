#if CURLEW_TSAN
    internal import SanitizerSupport

    /// ThreadSanitizer builds only (`scripts/sanitize.sh thread`): every `Mutex` in this module is a
    /// `TSanMutex`, whose lock hand-over ThreadSanitizer can see (see Sources/SanitizerSupport).
    typealias Mutex<Value: ~Copyable> = TSanMutex<Value>
#endif
