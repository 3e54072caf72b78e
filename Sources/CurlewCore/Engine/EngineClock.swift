#if canImport(Glibc)
    internal import Glibc
#endif

/// The engine's monotonic clock in nanoseconds (`CLOCK_MONOTONIC`), cheap enough for every loop.
package enum EngineClock {
    package static func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_MONOTONIC, &spec)
        return UInt64(spec.tv_sec) * 1_000_000_000 + UInt64(spec.tv_nsec)
    }
}
