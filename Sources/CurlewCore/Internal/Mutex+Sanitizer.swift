#if CURLEW_TSAN
    package import SanitizerSupport

    /// ThreadSanitizer builds only (`scripts/sanitize.sh thread`): every `Mutex` in this module is a
    /// `TSanMutex`, whose lock hand-over ThreadSanitizer can see (see Sources/SanitizerSupport).
    package typealias Mutex<Value: ~Copyable> = TSanMutex<Value>
#endif
