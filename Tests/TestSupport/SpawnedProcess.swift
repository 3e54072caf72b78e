import Foundation
#if canImport(Glibc)
    import Glibc
#endif
import Synchronization

/// A child process started with `posix_spawn`, for tests that run a command-line tool or the test
/// binary again.
///
/// Foundation's `Process.run()` on Linux (swift-corelibs-foundation, Swift 6.3.1 included) scans
/// `/proc/self/fd` and copies 256 bytes of each short directory entry; when an entry sits at the
/// end of glibc's buffer before an unmapped page, the whole test process crashes with SIGSEGV
/// (swiftlang/swift-corelibs-foundation#5472; seen in fresh-clone CI runs, in
/// `Process.run() + 6428`). This starts the child directly and, like Foundation, closes every
/// descriptor above 2 in it, so the child holds none of the test process's sockets or pipes. The
/// child starts with no signal blocked and every signal at its default action
/// (`POSIX_SPAWN_SETSIGMASK`, `POSIX_SPAWN_SETSIGDEF`): the Swift runtime's threads block
/// `SIGTERM` and friends, and a child of Foundation's `Process` inherited that mask, so
/// ``terminate()`` did not end it.
///
/// The child is reaped exactly once, with `state` held: by ``isRunning`` or
/// ``terminationIfEnded`` (`waitpid` with `WNOHANG`), or by the one thread that
/// ``termination()`` starts, which blocks in `waitid` with `WNOWAIT` (so it only watches) and
/// reaps under the lock once the child has ended. Whoever reaps records how the child ended,
/// so later calls answer from that record and never wait for the pid again (by then it may name
/// another process); ``kill(_:)`` sends nothing to a reaped child for the same reason. A child
/// nobody reaped is waited for on a thread of its own when the last reference goes, so it does
/// not stay a zombie.
package final class SpawnedProcess: Sendable {
    /// How a child ended, as Foundation's `terminationReason` and `terminationStatus` put it.
    package struct Termination: Sendable, Equatable {
        /// Why a child ended.
        package enum Reason: Sendable, Equatable {
            /// It exited: returned from `main` or called `exit`.
            case exit
            /// A signal ended it.
            case uncaughtSignal
        }

        /// Why it ended.
        package let reason: Reason
        /// The exit code, or the number of the signal that ended it.
        package let status: Int32

        /// What is recorded when the child's status is lost: something other than this type reaped
        /// it (`waitpid` answered `ECHILD`). An exit with -1, which no real exit code is, so a
        /// test that expects 0 or a signal fails.
        package static let lost = Termination(reason: .exit, status: -1)

        /// A record of how a child ended.
        package init(reason: Reason, status: Int32) {
            self.reason = reason
            self.status = status
        }
    }

    /// What is known about the child.
    private struct State {
        /// How it ended, once reaped; set exactly once, by whoever reaped it.
        var termination: Termination?
        /// Whether ``termination()`` has started the waiting thread; from then on nothing else
        /// reaps the child (that thread may be about to wait for its pid).
        var waiterStarted = false
        /// Callers of ``termination()`` waiting for the waiting thread.
        var waiting: [CheckedContinuation<Termination, Never>] = []
    }

    /// The child's process ID.
    package let pid: Int32
    /// Guards everything known about the child (`State`); the child is reaped, and sent signals,
    /// only while it is held.
    private let state = Mutex(State())

    /// The C type of `posix_spawn_file_actions_addclosefrom_np`.
    private typealias CloseFrom = @convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32

    /// glibc 2.34's `posix_spawn_file_actions_addclosefrom_np`, which Swift's Glibc module does
    /// not import.
    private static let addCloseFrom: CloseFrom? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: CloseFrom.self)
    }()

    /// Starts `path` with `arguments`. Standard input is `standardInput`, standard output is
    /// `standardOutput` (descriptors of the caller's, duplicated; the caller closes its own copies,
    /// a pipe's other end included, when it no longer needs them), each `/dev/null` when `nil`;
    /// standard error is standard output when `mergesStandardError`, else `/dev/null`. The
    /// environment is `environment`, or the test process's when `nil`.
    /// - Throws: `POSIXError` when the child cannot be started.
    package init(
        path: String, arguments: [String], standardInput: Int32? = nil, standardOutput: Int32? = nil,
        mergesStandardError: Bool = false, environment: [String: String]? = nil
    ) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        if let standardInput {
            posix_spawn_file_actions_adddup2(&actions, standardInput, 0)
        } else {
            posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        }
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
        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var noSignals = sigset_t()
        sigemptyset(&noSignals)
        var everySignal = sigset_t()
        sigfillset(&everySignal)
        posix_spawnattr_setsigmask(&attributes, &noSignals)
        posix_spawnattr_setsigdefault(&attributes, &everySignal)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
        var pid: pid_t = 0
        let result =
            environmentEntries.map { posix_spawn(&pid, path, &actions, &attributes, argv, $0) }
            ?? posix_spawn(&pid, path, &actions, &attributes, argv, environ)
        guard result == 0 else { throw POSIXError(POSIXErrorCode(rawValue: result) ?? .EINVAL) }
        self.pid = pid
    }

    /// Reaps a child that has ended; waits for one that still runs on a thread of its own, so it
    /// does not stay a zombie once it ends.
    deinit {
        let pid = self.pid
        // No one else holds this object, so no one else reaps the child or waits for it any more.
        let reaped = state.withLock { Self.reapIfEnded(pid, &$0) != nil }
        guard !reaped else { return }
        Thread.detachNewThread {
            var status: Int32 = 0
            while waitpid(pid, &status, 0) < 0, errno == EINTR {}
        }
    }

    /// Runs `path` with `arguments` to its end, standard output and error into one pipe (standard
    /// input `/dev/null`), reading on a thread of its own; returns what ``terminationStatus()``
    /// does and the output.
    /// - Throws: `POSIXError` when the child cannot be started, or an error closing the pipe.
    package static func run(path: String, arguments: [String], environment: [String: String]? = nil) async throws -> (status: Int32, output: String) {
        let pipe = Pipe()
        let process = try SpawnedProcess(
            path: path, arguments: arguments, standardOutput: pipe.fileHandleForWriting.fileDescriptor,
            mergesStandardError: true, environment: environment)
        try pipe.fileHandleForWriting.close()
        let output = await withCheckedContinuation { (continuation: CheckedContinuation<Data, Never>) in
            Thread.detachNewThread { continuation.resume(returning: pipe.fileHandleForReading.readDataToEndOfFile()) }
        }
        return (await process.terminationStatus(), String(decoding: output, as: UTF8.self))
    }

    /// Waits for the child to end (on a thread of its own, never a cooperative one) and returns
    /// how it ended; at once when that is already known.
    package func termination() async -> Termination {
        await withCheckedContinuation { (continuation: CheckedContinuation<Termination, Never>) in
            let (ended, startsWaiter) = state.withLock { state -> (Termination?, Bool) in
                if let termination = state.termination { return (termination, false) }
                state.waiting.append(continuation)
                defer { state.waiterStarted = true }
                return (nil, !state.waiterStarted)
            }
            if let ended { continuation.resume(returning: ended) }
            if startsWaiter { Thread.detachNewThread { self.waitAndReap() } }
        }
    }

    /// Waits like ``termination()`` and returns what Foundation's `terminationStatus` would: the
    /// exit code, or the number of the signal that ended the child (-1 when its status was lost,
    /// see ``Termination/lost``).
    package func terminationStatus() async -> Int32 {
        await termination().status
    }

    /// How the child ended, or `nil` while it runs; never blocks. Reaps an ended child with
    /// `waitpid(WNOHANG)` and records how it ended, so ``termination()`` answers from that record
    /// (unless ``termination()`` already waits, which then reaps it itself).
    package var terminationIfEnded: Termination? {
        let pid = self.pid
        return state.withLock { state -> Termination? in
            if let termination = state.termination { return termination }
            guard state.waiterStarted else { return Self.reapIfEnded(pid, &state) }
            // The waiting thread reaps it: only look (WNOWAIT).
            var info = siginfo_t()
            var result: Int32
            repeat { result = waitid(P_PID, id_t(pid), &info, WEXITED | WNOHANG | WNOWAIT) } while result < 0 && errno == EINTR
            guard result == 0 else { return .lost }
            guard info._sifields._sigchld.si_pid == pid else { return nil }
            let status = info._sifields._sigchld.si_status
            return Termination(reason: info.si_code == CLD_EXITED ? .exit : .uncaughtSignal, status: status)
        }
    }

    /// Whether the child still runs, as Foundation's `isRunning`; never blocks (see
    /// ``terminationIfEnded``, which reaps a child that has ended).
    package var isRunning: Bool {
        terminationIfEnded == nil
    }

    /// Sends `signal` to the child unless it has been reaped (its pid may name another process by
    /// then); a child that has ended but is not reaped yet takes it without effect.
    /// - Returns: Whether `kill(2)` was called and succeeded.
    @discardableResult
    package func kill(_ signal: Int32) -> Bool {
        let pid = self.pid
        return state.withLock { state in
            state.termination == nil && sendSignal(signal, to: pid)
        }
    }

    /// Sends `SIGTERM`, as Foundation's `terminate()` does. The child starts with `SIGTERM`
    /// unblocked and at its default action (see the type's description), so this ends it unless
    /// the child itself handles or ignores the signal; `kill(SIGKILL)` always ends it.
    package func terminate() {
        kill(SIGTERM)
    }

    /// The waiting thread: blocks until the child has ended without reaping it (`WNOWAIT`), then
    /// reaps it with `state` held, records how it ended and resumes every waiting caller.
    private func waitAndReap() {
        let pid = self.pid
        while true {
            var info = siginfo_t()
            while waitid(P_PID, id_t(pid), &info, WEXITED | WNOWAIT) < 0, errno == EINTR {}
            let ended = state.withLock { state -> (Termination, [CheckedContinuation<Termination, Never>])? in
                guard let termination = Self.reapIfEnded(pid, &state) else { return nil }
                defer { state.waiting = [] }
                return (termination, state.waiting)
            }
            if let (termination, waiting) = ended {
                for continuation in waiting { continuation.resume(returning: termination) }
                return
            }
        }
    }

    /// Reaps the child if it has ended (`waitpid` with `WNOHANG`) and records how it ended;
    /// returns the record, or `nil` while the child runs. Call with `state` held.
    private static func reapIfEnded(_ pid: pid_t, _ state: inout State) -> Termination? {
        if let termination = state.termination { return termination }
        var status: Int32 = 0
        var result: pid_t
        repeat { result = waitpid(pid, &status, WNOHANG) } while result < 0 && errno == EINTR
        guard result != 0 else { return nil }
        let signal = status & 0x7F
        let termination =
            result != pid
            ? Termination.lost
            : signal == 0 ? Termination(reason: .exit, status: (status >> 8) & 0xFF) : Termination(reason: .uncaughtSignal, status: signal)
        state.termination = termination
        return termination
    }
}

/// `kill(2)`, under a name that ``SpawnedProcess/kill(_:)`` does not shadow.
private func sendSignal(_ signal: Int32, to pid: pid_t) -> Bool {
    kill(pid, signal) == 0
}
