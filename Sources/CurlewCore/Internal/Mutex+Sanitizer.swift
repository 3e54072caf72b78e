#if CURLEW_TSAN
    package import SanitizerSupport

    /// ThreadSanitizer builds only (`scripts/sanitize.sh thread`): every `Mutex` in this module is a
    /// `TSanMutex`, whose lock hand-over ThreadSanitizer can see (see Sources/SanitizerSupport).
    /// Internal, like each module's own: a `package` one reached every module of the package beside
    /// Synchronization's `Mutex` and made each use there ambiguous.
    typealias Mutex<Value: ~Copyable> = TSanMutex<Value>
    /// The `Mutex` of a `package` property (a name no other module declares).
    package typealias PackageMutex<Value: ~Copyable> = TSanMutex<Value>
#else
    package import Synchronization

    /// The `Mutex` of a `package` property: Synchronization's, or in ThreadSanitizer builds
    /// `TSanMutex` (a name no other module declares).
    package typealias PackageMutex<Value: ~Copyable> = Synchronization.Mutex<Value>
#endif
