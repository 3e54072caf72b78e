#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Context switches of this whole process so far, voluntary plus involuntary (`getrusage`'s
/// `ru_nvcsw + ru_nivcsw` for `RUSAGE_SELF`: the sum of `voluntary_ctxt_switches` and
/// `nonvoluntary_ctxt_switches` in `/proc/self/task/*/status`, including threads that already
/// exited, which `/proc` no longer lists — the raw libcurl driver's thread ends with its batch).
enum ContextSwitches {
    static func count() -> UInt64 {
        var usage = rusage()
        #if canImport(Glibc)
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        #else
        getrusage(RUSAGE_SELF, &usage)
        #endif
        return UInt64(max(0, usage.ru_nvcsw)) + UInt64(max(0, usage.ru_nivcsw))
    }
}
