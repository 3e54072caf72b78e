import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A child process started with `posix_spawn`, for tests that run a command-line tool.
///
/// Foundation's `Process.run()` on Linux (swift-corelibs-foundation, Swift 6.3.1 included) scans
/// `/proc/self/fd` and copies 256 bytes of each short directory entry; when an entry sits at the
/// end of glibc's buffer before an unmapped page, the whole test process crashes with SIGSEGV
/// (swiftlang/swift-corelibs-foundation#5472; seen once in a fresh-clone CI run, in
/// `Process.run() + 6428`). This starts the child directly and, like Foundation, closes every
/// descriptor above 2 in it, so the child holds none of the test process's sockets.
struct SpawnedProcess: Sendable {
    /// The child's process ID.
    let pid: pid_t

    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// glibc 2.34's `posix_spawn_file_actions_addclosefrom_np`, which Swift's Glibc module does
    /// not import.
    private static let addCloseFrom: CloseFrom? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: CloseFrom.self)
    }()

    /// Starts `path` with `arguments`; standard input and error are `/dev/null`, standard output
    /// is `standardOutput` (a descriptor of the caller's, duplicated) or `/dev/null`.
    /// - Throws: `POSIXError` when the child cannot be started.
    init(path: String, arguments: [String], standardOutput: Int32? = nil, mergesStandardError: Bool = false,
         environment: [String: String]? = nil) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        if let standardOutput {
            posix_spawn_file_actions_adddup2(&actions, standardOutput, 1)
        } else {
            posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
        }
        if mergesStandardError {
            posix_spawn_file_actions_adddup2(&actions, 1, 2)
        } else {
            posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0)
        }
        guard let addCloseFrom = Self.addCloseFrom else { throw POSIXError(.ENOSYS) }
        let closing = addCloseFrom(&actions, 3)
        guard closing == 0 else { throw POSIXError(POSIXErrorCode(rawValue: closing) ?? .EINVAL) }
        let argv: [UnsafeMutablePointer<CChar>?] = ([path] + arguments).map { strdup($0) } + [nil]
        defer { for argument in argv { free(argument) } }
        let environmentEntries: [UnsafeMutablePointer<CChar>?]? = environment.map { $0.map { strdup("\($0.key)=\($0.value)") } + [nil] }
        defer { for entry in environmentEntries ?? [] { free(entry) } }
        var pid: pid_t = 0
        let result = environmentEntries.map { posix_spawn(&pid, path, &actions, nil, argv, $0) } ?? posix_spawn(&pid, path, &actions, nil, argv, environ)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EINVAL) }
        self.pid = pid
    }

    /// Waits for the child on a thread of its own (never a cooperative one) and returns what
    /// Foundation's `terminationStatus` would: the exit code, or the number of the signal that
    /// ended it.
    func terminationStatus() async -> Int32 {
        await withCheckedContinuation { (continuation: CheckedContinuation<Int32, Never>) in
            let pid = self.pid
            Thread.detachNewThread {
                var status: Int32 = 0
                while waitpid(pid, &status, 0) < 0, errno == EINTR {}
                let signal = status & 0x7F
                continuation.resume(returning: signal == 0 ? (status >> 8) & 0xFF : signal)
            }
        }
    }
}
