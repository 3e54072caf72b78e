#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// `CLOCK_MONOTONIC` in nanoseconds: cheap enough to read twice per request.
enum MonotonicClock {
    static func nanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}

/// User plus system CPU time of this whole process (every thread), from `getrusage`.
enum ProcessCPUTime {
    /// Microseconds of CPU used by the process so far.
    static func microseconds() -> UInt64 {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        func micros(_ time: timeval) -> UInt64 { UInt64(time.tv_sec) * 1_000_000 + UInt64(time.tv_usec) }
        return micros(usage.ru_utime) + micros(usage.ru_stime)
    }
}
