#if canImport(Glibc)
    internal import Glibc
#elseif canImport(Darwin)
    package import Darwin
#endif

/// Names the engine thread `curlew-engine` (visible in `top -H`, `gdb`, `ps -L`,
/// `/proc/<pid>/task/*/comm`).
package enum EngineThreadName {
    /// The name (Linux allows 15 bytes).
    package static let name = "curlew-engine"

    /// Names the calling thread. On Linux through `/proc/thread-self/comm`, which is what
    /// `pthread_setname_np` writes (Glibc's module does not export that GNU extension to Swift).
    package static func apply() {
        #if canImport(Glibc)
            let descriptor = open("/proc/thread-self/comm", O_WRONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return }
            defer { close(descriptor) }
            _ = name.withCString { write(descriptor, $0, strlen($0)) }
        #elseif canImport(Darwin)
            _ = pthread_setname_np(name)
        #endif
    }
}
